//! The drive's state after preconditioning as bytes: what a precondition snapshot holds
//! (run/precondition_cache.rs keeps the files). Every field of the FTL that preconditioning
//! changes is written in a fixed little-endian layout; the fields fixed when the drive is built
//! (geometry, static map, the config's rules, the variation model's per-block rates) are not:
//! a snapshot is loaded into a drive built afresh from the same inputs. Nor is the forward
//! map: it is the inverse of the blocks' reverse maps and of the in-order fill (every valid
//! reverse entry is a mapped logical page, so is every page a full block of the fill holds by
//! formula, and nothing else is mapped), rebuilt on load, which halves the file at about a
//! second more per load on a 384 GiB drive (docs/performance.md). The fill is stored as its
//! formula (ftl/fill.rs: the footprint's pages and the swept range), so a full drive's
//! snapshot holds its block records, not a word per page. The encoders
//! destructure each struct without `..`, so a field added to the FTL does not compile until it
//! is written here or named as fixed at build time (then [`STATE_VERSION`] goes up).
//!
//! Loading checks every value it will later index with (block numbers, logical and physical
//! pages, states, steps) and answers `InvalidData` instead of storing one out of range, so a
//! damaged file cannot make the simulation panic; the file's checksum (zstd's, checked by the
//! caller at the end of the stream) catches damage that stays in range.

use std::collections::BTreeSet;
use std::io::{self, Read, Write};

use super::fill::FillMap;
use super::free_blocks::FreeBlocks;
use super::mapping::ChunkedTable;
use super::plane::{Block, BlockState, Plane, INVALID, NONE};
use super::variation::{Variation, VariationCounters};
use super::{Ftl, FtlCounters, Shadow};

/// Layout of the state below; part of the snapshot's format version.
pub const STATE_VERSION: u32 = 2;

/// Little-endian writer of a snapshot's fields.
pub struct Encoder<W: Write> {
    out: W,
    /// Scratch bytes of one run of values.
    bytes: Vec<u8>,
}

impl<W: Write> Encoder<W> {
    pub fn new(out: W) -> Self {
        Encoder {
            out,
            bytes: Vec::new(),
        }
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    pub fn bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)
    }

    pub fn u8(&mut self, value: u8) -> io::Result<()> {
        self.out.write_all(&[value])
    }

    pub fn u32(&mut self, value: u32) -> io::Result<()> {
        self.out.write_all(&value.to_le_bytes())
    }

    pub fn u64(&mut self, value: u64) -> io::Result<()> {
        self.out.write_all(&value.to_le_bytes())
    }

    /// A run of values, each stored as its difference from the one before (wrapping): a block
    /// filled in address order, or a map chunk filled so, becomes a run of equal differences,
    /// which compresses to almost nothing.
    pub fn u32s(&mut self, values: &[u32]) -> io::Result<()> {
        self.bytes.clear();
        let mut previous = 0u32;
        for &value in values {
            self.bytes
                .extend_from_slice(&value.wrapping_sub(previous).to_le_bytes());
            previous = value;
        }
        self.out.write_all(&self.bytes)
    }
}

/// Reader of what [`Encoder`] wrote. Errors are `io::Error`s: `UnexpectedEof` for a stream
/// that ends early, `InvalidData` for a value out of range.
pub struct Decoder<R: Read> {
    input: R,
    bytes: Vec<u8>,
}

/// An `InvalidData` error saying what is out of range.
pub fn invalid(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

impl<R: Read> Decoder<R> {
    pub fn new(input: R) -> Self {
        Decoder {
            input,
            bytes: Vec::new(),
        }
    }

    /// True when the stream has no byte left (reading it to its end, where zstd checks
    /// the frame's checksum).
    pub fn at_end(&mut self) -> io::Result<bool> {
        let mut rest = [0u8; 1];
        Ok(self.input.read(&mut rest)? == 0)
    }

    pub fn bytes(&mut self, len: usize) -> io::Result<Vec<u8>> {
        let mut bytes = vec![0; len];
        self.input.read_exact(&mut bytes)?;
        Ok(bytes)
    }

    pub fn u8(&mut self) -> io::Result<u8> {
        let mut b = [0; 1];
        self.input.read_exact(&mut b)?;
        Ok(b[0])
    }

    pub fn u32(&mut self) -> io::Result<u32> {
        let mut b = [0; 4];
        self.input.read_exact(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    pub fn u64(&mut self) -> io::Result<u64> {
        let mut b = [0; 8];
        self.input.read_exact(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// A `u32` that must be below `end` (or [`NONE`] when `none_ok`), named `what` in the error.
    fn index(&mut self, end: usize, none_ok: bool, what: &str) -> io::Result<u32> {
        let value = self.u32()?;
        if (value as usize) < end || (none_ok && value == NONE) {
            Ok(value)
        } else {
            Err(invalid(format!("{what} {value} is out of range (< {end})")))
        }
    }

    fn flag(&mut self, what: &str) -> io::Result<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(invalid(format!("{what}: flag {other} is neither 0 nor 1"))),
        }
    }

    /// A run of values [`Encoder::u32s`] wrote, into `out`; each must pass `ok`.
    pub fn u32s(
        &mut self,
        out: &mut [u32],
        ok: impl Fn(u32) -> bool,
        what: &str,
    ) -> io::Result<()> {
        self.bytes.resize(out.len() * 4, 0);
        self.input.read_exact(&mut self.bytes)?;
        let mut previous = 0u32;
        for (value, raw) in out.iter_mut().zip(self.bytes.chunks_exact(4)) {
            let delta = u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]);
            previous = previous.wrapping_add(delta);
            if !ok(previous) {
                return Err(invalid(format!("{what}: value {previous} is out of range")));
            }
            *value = previous;
        }
        Ok(())
    }
}

impl Ftl {
    /// Write the state preconditioning leaves (see the module's comment).
    pub fn save_state<W: Write>(&self, e: &mut Encoder<W>) -> io::Result<()> {
        let Ftl {
            // Fixed when the drive is built from its inputs.
            geometry: _,
            static_map: _,
            dynamic: _,
            gc_threshold_blocks: _,
            gc_threshold_pages: _,
            pages_per_plane: _,
            plane_targets: _,
            block_choice: _,
            unwritten_reads: _,
            gc_block_release: _,
            gc_max_victims_per_plane: _,
            write_stall_below_free_blocks: _,
            gc_separate_write_block: _,
            place_on_read: _,
            // A test hook set after preconditioning, and scratch space.
            break_relocation_for_test: _,
            gc_moves: _,
            // Its fill's formula; the rest is rebuilt from the reverse maps on load (see the
            // module's comment).
            map,
            // The state.
            planes,
            counters,
            next_chip,
            next_plane_in_chip,
            shadow,
            variation,
            defer_release,
        } = self;
        let FtlCounters {
            host_page_writes,
            gc_runs,
            gc_pages_moved,
            erases,
            unmapped_reads,
        } = counters;
        for value in [
            host_page_writes,
            gc_runs,
            gc_pages_moved,
            erases,
            unmapped_reads,
        ] {
            e.u64(*value)?;
        }
        e.u32(*next_chip)?;
        e.u32s(next_plane_in_chip)?;
        e.u8(u8::from(*defer_release))?;
        save_fill(e, map.fill())?;
        for plane in planes {
            save_plane(e, plane)?;
        }
        e.u8(u8::from(variation.is_some()))?;
        if let Some(variation) = variation {
            save_variation(e, variation)?;
        }
        e.u8(u8::from(shadow.is_some()))?;
        if let Some(Shadow {
            lpn_version,
            ppn_version,
            violations,
        }) = shadow
        {
            save_table(e, lpn_version)?;
            e.u32s(ppn_version)?;
            e.u64(*violations)?;
        }
        Ok(())
    }

    /// Read what [`Ftl::save_state`] wrote into this drive, which must have been built afresh
    /// from the same inputs (so its fixed fields and sizes are the snapshot's).
    pub fn load_state<R: Read>(&mut self, d: &mut Decoder<R>) -> io::Result<()> {
        let logical = self.map.logical_pages();
        let chips = self.geometry.chips() as usize;
        let planes_per_chip = (self.geometry.dies_per_chip * self.geometry.planes_per_die) as usize;
        let mut counters = [0u64; 5];
        for value in &mut counters {
            *value = d.u64()?;
        }
        let [host_page_writes, gc_runs, gc_pages_moved, erases, unmapped_reads] = counters;
        self.counters = FtlCounters {
            host_page_writes,
            gc_runs,
            gc_pages_moved,
            erases,
            unmapped_reads,
        };
        self.next_chip = d.index(chips, false, "next chip")?;
        d.u32s(
            &mut self.next_plane_in_chip,
            |p| (p as usize) < planes_per_chip,
            "next plane in chip",
        )?;
        self.defer_release = d.flag("deferred release")?;
        if let Some(fill) = load_fill(d, self)? {
            self.map.install_fill(fill);
        }
        let lpn_ok = |lpn: u32| lpn == INVALID || u64::from(lpn) < logical;
        for plane in &mut self.planes {
            load_plane(d, plane, &lpn_ok)?;
        }
        self.check_fill_blocks()?;
        self.rebuild_map();
        if d.flag("variation")? != self.variation.is_some() {
            return Err(invalid(
                "the variation model is on in one of snapshot and run only",
            ));
        }
        if let Some(variation) = &mut self.variation {
            load_variation(d, variation)?;
        }
        if d.flag("integrity shadow")? != self.shadow.is_some() {
            return Err(invalid(
                "integrity checking is on in one of snapshot and run only",
            ));
        }
        if let Some(shadow) = &mut self.shadow {
            load_table(d, &mut shadow.lpn_version, |_| true, "shadow versions")?;
            d.u32s(&mut shadow.ppn_version, |_| true, "shadow versions")?;
            shadow.violations = d.u64()?;
        }
        Ok(())
    }
}

/// Map entries prefetched ahead of the one set while the map is rebuilt (random writes).
const REBUILD_AHEAD: usize = 16;

impl Ftl {
    /// Map every logical page a valid reverse entry holds to that physical page. A chunk of
    /// the map is allocated when a page of it is first mapped, as when the pages were written
    /// (only the order of the chunks in memory differs), so `memory.mapping_bytes` is the same.
    fn rebuild_map(&mut self) {
        if self.rebuild_map_by_planes() {
            return;
        }
        let pages_per_block = self.geometry.pages_per_block as usize;
        for (p, plane) in self.planes.iter().enumerate() {
            for (b, block) in plane.blocks.iter().enumerate() {
                let Some(reverse) = &block.reverse else {
                    continue;
                };
                let first = (p as u64 * self.pages_per_plane) as usize + b * pages_per_block;
                for (page, &lpn) in reverse.iter().enumerate() {
                    if let Some(&ahead) = reverse.get(page + REBUILD_AHEAD) {
                        if ahead != INVALID {
                            self.map.prefetch(u64::from(ahead));
                        }
                    }
                    if lpn != INVALID {
                        self.map.set(u64::from(lpn), (first + page) as u32);
                    }
                }
            }
        }
    }
}

impl Ftl {
    /// Every block holding fill pages by formula lies where the fill put full blocks.
    fn check_fill_blocks(&self) -> io::Result<()> {
        let ppb = self.geometry.pages_per_block;
        for (p, plane) in self.planes.iter().enumerate() {
            for (b, block) in plane.blocks.iter().enumerate() {
                if !block.holds_fill() {
                    continue;
                }
                let Some(fill) = self.map.fill() else {
                    return Err(invalid(format!(
                        "block {b} of plane {p} holds fill pages, but the drive has no fill"
                    )));
                };
                let full_blocks = fill.stream_pages(p) / u64::from(ppb);
                let index = (b as u32).checked_sub(fill.first_block);
                let in_fill = index.is_some_and(|i| u64::from(i) < full_blocks);
                if !in_fill
                    || block.valid_pages != ppb
                    || block.next_page != ppb
                    || block.state != BlockState::Full
                {
                    return Err(invalid(format!(
                        "block {b} of plane {p} holds fill pages it cannot hold"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Whether the drive was filled in order, then the fill's formula: its first block, the
/// swept range, and each plane's footprint pages (local numbers).
fn save_fill<W: Write>(e: &mut Encoder<W>, fill: Option<&FillMap>) -> io::Result<()> {
    let Some(fill) = fill else {
        return e.u8(0);
    };
    e.u8(1)?;
    e.u32(fill.first_block)?;
    e.u64(fill.sweep_start)?;
    e.u64(fill.swept)?;
    for plane in 0..fill.planes.len() {
        let own = fill.plane_footprint(plane);
        e.u32(own.len() as u32)?;
        e.u32s(own)?;
    }
    Ok(())
}

/// What [`save_fill`] wrote, checked against the drive `ftl` (built afresh).
fn load_fill<R: Read>(d: &mut Decoder<R>, ftl: &Ftl) -> io::Result<Option<FillMap>> {
    if !d.flag("fill")? {
        return Ok(None);
    }
    let logical = ftl.logical_pages();
    let blocks = ftl.geometry.blocks_per_plane;
    let first_block = d.index(blocks as usize + 1, false, "fill's first block")?;
    let sweep_start = d.u64()?;
    let swept = d.u64()?;
    if swept > logical || (swept > 0 && sweep_start >= logical) {
        return Err(invalid(format!(
            "fill sweep of {swept} pages from {sweep_start} on {logical} logical pages"
        )));
    }
    let planes = ftl.planes.len();
    let mut counts = Vec::with_capacity(planes);
    let mut locals = Vec::new();
    for _ in 0..planes {
        let count = d.u32()? as usize;
        if (locals.len() + count) as u64 > logical {
            return Err(invalid("more footprint pages than logical pages"));
        }
        let at = locals.len();
        locals.resize(at + count, 0);
        d.u32s(&mut locals[at..], |_| true, "fill footprint")?;
        counts.push(count);
    }
    let fill = FillMap::new(
        &ftl.static_map,
        ftl.drive_shape(first_block),
        (&counts, locals),
        (sweep_start, swept),
    );
    fill.check(blocks).map_err(invalid)?;
    Ok(Some(fill))
}

/// Each chunk: whether it is allocated, then its values.
fn save_table<W: Write>(e: &mut Encoder<W>, table: &ChunkedTable) -> io::Result<()> {
    for c in 0..table.chunk_count() {
        match table.chunk_values(c) {
            Some(values) => {
                e.u8(1)?;
                e.u32s(values)?;
            }
            None => e.u8(0)?,
        }
    }
    Ok(())
}

fn load_table<R: Read>(
    d: &mut Decoder<R>,
    table: &mut ChunkedTable,
    ok: impl Fn(u32) -> bool,
    what: &str,
) -> io::Result<()> {
    for c in 0..table.chunk_count() {
        if d.flag(what)? {
            d.u32s(table.chunk_values_mut(c), &ok, what)?;
        }
    }
    Ok(())
}

fn save_plane<W: Write>(e: &mut Encoder<W>, plane: &Plane) -> io::Result<()> {
    let Plane {
        blocks,
        free,
        free_by_wear,
        speed_keys,
        active,
        active_gc,
        opened_blocks,
        collecting,
        speed_ordered,
        // From the geometry.
        pages_per_block: _,
        bucket_head,
        bucket_tail,
        // A buffer, not state.
        spare_reverse: _,
    } = plane;
    e.u32(active.unwrap_or(NONE))?;
    e.u32(active_gc.unwrap_or(NONE))?;
    e.u64(*opened_blocks)?;
    e.u32(*collecting)?;
    e.u8(u8::from(*speed_ordered))?;
    e.u32s(bucket_head)?;
    e.u32s(bucket_tail)?;
    e.u32(free.len() as u32)?;
    for (speed, erases, block) in free.iter() {
        for value in [speed, erases, block] {
            e.u32(value)?;
        }
    }
    e.u32(free_by_wear.len() as u32)?;
    for &(erases, block) in free_by_wear {
        e.u32(erases)?;
        e.u32(block)?;
    }
    e.u32(speed_keys.len() as u32)?;
    e.u32s(speed_keys)?;
    for block in blocks {
        let Block {
            erase_count,
            valid_pages,
            next_page,
            state,
            reverse,
            prev,
            next,
        } = block;
        for value in [*erase_count, *valid_pages, *next_page, *prev, *next] {
            e.u32(value)?;
        }
        e.u8(state_code(*state))?;
        e.u8(u8::from(reverse.is_some()))?;
        if let Some(reverse) = reverse {
            e.u32s(reverse)?;
        }
    }
    Ok(())
}

fn load_plane<R: Read>(
    d: &mut Decoder<R>,
    plane: &mut Plane,
    lpn_ok: &impl Fn(u32) -> bool,
) -> io::Result<()> {
    let blocks = plane.blocks.len();
    let pages = plane.pages_per_block as usize;
    let open = |b: u32| (b != NONE).then_some(b);
    plane.active = open(d.index(blocks, true, "open block")?);
    plane.active_gc = open(d.index(blocks, true, "GC open block")?);
    plane.opened_blocks = d.u64()?;
    plane.collecting = d.index(blocks + 1, false, "blocks under collection")?;
    plane.speed_ordered = d.flag("speed ordering")?;
    let block_ok = |b: u32| b == NONE || (b as usize) < blocks;
    d.u32s(&mut plane.bucket_head, block_ok, "list head")?;
    d.u32s(&mut plane.bucket_tail, block_ok, "list tail")?;
    let count = d.index(blocks + 1, false, "free blocks")?;
    let mut free = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let speed = d.u32()?;
        let erases = d.u32()?;
        free.push((speed, erases, d.index(blocks, false, "free block")?));
    }
    plane.free = FreeBlocks::from_entries(free);
    let count = d.index(blocks + 1, false, "free blocks by wear")?;
    let mut by_wear = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let erases = d.u32()?;
        by_wear.push((erases, d.index(blocks, false, "free block")?));
    }
    plane.free_by_wear = BTreeSet::from_iter(by_wear);
    let keys = d.u32()? as usize;
    if keys != 0 && keys != blocks {
        return Err(invalid(format!("{keys} speed keys for {blocks} blocks")));
    }
    plane.speed_keys = vec![0; keys];
    d.u32s(&mut plane.speed_keys, |_| true, "speed key")?;
    for block in &mut plane.blocks {
        block.erase_count = d.u32()?;
        block.valid_pages = d.index(pages + 1, false, "valid pages")?;
        block.next_page = d.index(pages + 1, false, "next page")?;
        block.prev = d.index(blocks, true, "list neighbour")?;
        block.next = d.index(blocks, true, "list neighbour")?;
        block.state = state_of(d.u8()?)?;
        block.reverse = if d.flag("reverse map")? {
            let mut reverse = vec![INVALID; pages].into_boxed_slice();
            d.u32s(&mut reverse, lpn_ok, "reverse map")?;
            Some(reverse)
        } else {
            None
        };
    }
    Ok(())
}

fn save_variation<W: Write>(e: &mut Encoder<W>, variation: &Variation) -> io::Result<()> {
    let Variation {
        // Drawn from the seed when the drive is built; erases change only the step.
        config: _,
        growth: _,
        program_ns_by_step: _,
        median_step: _,
        step,
        beyond_ecc,
        counters,
    } = variation;
    e.bytes(step)?;
    e.u64(*beyond_ecc)?;
    let VariationCounters {
        writes_by_class: [fast, medium, slow],
        conflict_writes,
        fast_stream_writes,
        host_program_ns_sum,
        step_drops,
    } = counters;
    for value in [
        fast,
        medium,
        slow,
        conflict_writes,
        fast_stream_writes,
        host_program_ns_sum,
        step_drops,
    ] {
        e.u64(*value)?;
    }
    Ok(())
}

fn load_variation<R: Read>(d: &mut Decoder<R>, variation: &mut Variation) -> io::Result<()> {
    let steps = variation.program_ns_by_step.len();
    let step = d.bytes(variation.step.len())?;
    if let Some(bad) = step.iter().find(|k| **k as usize >= steps) {
        return Err(invalid(format!("program step {bad} of {steps}")));
    }
    variation.step = step;
    variation.beyond_ecc = d.u64()?;
    let mut values = [0u64; 7];
    for value in &mut values {
        *value = d.u64()?;
    }
    let [fast, medium, slow, conflict_writes, fast_stream_writes, host_program_ns_sum, step_drops] =
        values;
    variation.counters = VariationCounters {
        writes_by_class: [fast, medium, slow],
        conflict_writes,
        fast_stream_writes,
        host_program_ns_sum,
        step_drops,
    };
    Ok(())
}

fn state_code(state: BlockState) -> u8 {
    match state {
        BlockState::Free => 0,
        BlockState::Active => 1,
        BlockState::Full => 2,
        BlockState::Collecting => 3,
        BlockState::Reserved => 4,
        BlockState::Moving => 5,
    }
}

fn state_of(code: u8) -> io::Result<BlockState> {
    Ok(match code {
        0 => BlockState::Free,
        1 => BlockState::Active,
        2 => BlockState::Full,
        3 => BlockState::Collecting,
        4 => BlockState::Reserved,
        5 => BlockState::Moving,
        _ => return Err(invalid(format!("block state {code}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::mapping::PageMap;
    use crate::ftl::{FtlConfig, VariationConfig};
    use crate::geometry::Geometry;

    /// Two planes of 16 blocks of 8 pages, variation on, integrity shadow kept, overwritten
    /// until garbage collection has run many times.
    fn aged() -> (Ftl, impl Fn() -> Ftl) {
        let geometry = Geometry {
            channels: 2,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 16,
            pages_per_block: 8,
            page_bytes: 4096,
        };
        let config = FtlConfig::plain(0.25, 0.125);
        let variation = VariationConfig {
            enabled: true,
            initial_pe_cycles: 12_000,
            ..Default::default()
        };
        let build = move || {
            let mut ftl = Ftl::new(&geometry, &config, config.static_map(&geometry), true);
            ftl.enable_variation(&variation, 600_000, 5).unwrap();
            ftl
        };
        let mut ftl = build();
        let mut ops = Vec::new();
        for round in 0..12u64 {
            for lpn in 0..ftl.logical_pages() {
                if (lpn * 7 + round) % 5 != 0 {
                    ftl.write(lpn, &[0, 0], &mut ops).unwrap();
                }
            }
        }
        assert!(ftl.counters().gc_runs > 10);
        (ftl, build)
    }

    /// The drive of [`aged`] filled in order to 0.9 (the fill's formula) around a footprint,
    /// then overwritten in part: blocks by formula, materialised ones and GC victims.
    fn filled() -> (Ftl, impl Fn() -> Ftl) {
        let (_, build) = aged();
        let mut ftl = build();
        let logical = ftl.logical_pages();
        let mut footprint = crate::ftl::Footprint::new(logical);
        for lpn in (0..logical).step_by(11) {
            footprint.insert(lpn);
        }
        let config = crate::ftl::PreconditionConfig {
            fill_fraction: 0.9,
            ..Default::default()
        };
        crate::ftl::precondition(&mut ftl, &config, Some(&footprint), 3).unwrap();
        assert!(ftl.map.fill().is_some());
        let mut ops = Vec::new();
        for lpn in (0..logical).step_by(7) {
            ftl.write(lpn, &[0, 0], &mut ops).unwrap();
        }
        assert!(ftl
            .planes
            .iter()
            .any(|p| p.blocks.iter().any(|b| b.holds_fill())));
        (ftl, build)
    }

    #[test]
    fn a_filled_drive_loads_as_it_was_saved() {
        let (ftl, build) = filled();
        let bytes = loads_as_saved(&ftl, &build);
        let step = bytes.len() / 150 + 1;
        for at in (0..bytes.len()).step_by(step) {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0xa5;
            let mut target = build();
            if target.load_state(&mut Decoder::new(&damaged[..])).is_ok() {
                // In range, so usable without a panic (the file's checksum refuses it).
                let mut ops = Vec::new();
                for lpn in 0..target.logical_pages() {
                    let _ = target.write(lpn, &[0, 0], &mut ops);
                }
            }
        }
    }

    /// `ftl`'s saved state, after checking that a drive from `build` loading it saves the
    /// same bytes, reports the same memory and maps every page alike.
    fn loads_as_saved(ftl: &Ftl, build: &impl Fn() -> Ftl) -> Vec<u8> {
        let bytes = saved(ftl);
        let mut loaded = build();
        loaded.load_state(&mut Decoder::new(&bytes[..])).unwrap();
        assert_eq!(saved(&loaded), bytes);
        assert_eq!(loaded.allocated_bytes(), ftl.allocated_bytes());
        for lpn in 0..ftl.logical_pages() {
            assert_eq!(
                loaded.mapped_target(lpn),
                ftl.mapped_target(lpn),
                "page {lpn}"
            );
        }
        bytes
    }

    /// A reverse entry off its own plane (which static allocation never leaves) makes the
    /// plane-major rebuild give up, changing nothing, and the entry-by-entry one map it.
    #[test]
    fn a_reverse_entry_off_its_plane_is_mapped_entry_by_entry() {
        let (ftl, build) = filled();
        let mut loaded = build();
        loaded
            .load_state(&mut Decoder::new(&saved(&ftl)[..]))
            .unwrap();
        // Swap a valid reverse entry of plane 0 with one of plane 1.
        let find = |ftl: &Ftl, p: usize| {
            ftl.planes[p]
                .blocks
                .iter()
                .enumerate()
                .find_map(|(b, block)| {
                    let reverse = block.reverse.as_ref()?;
                    let page = reverse.iter().position(|&l| l != INVALID)?;
                    Some((b, page, reverse[page]))
                })
        };
        let fill = loaded.map.fill().unwrap().clone();
        let fresh_map = |logical: u64| {
            let mut map = PageMap::new(logical);
            map.install_fill(fill.clone());
            map
        };
        // As saved, the drive takes the plane-major route.
        loaded.map = fresh_map(loaded.logical_pages());
        assert!(loaded.rebuild_map_by_planes());
        let (b0, page0, lpn0) = find(&loaded, 0).unwrap();
        let (b1, page1, lpn1) = find(&loaded, 1).unwrap();
        loaded.planes[0].blocks[b0].reverse.as_mut().unwrap()[page0] = lpn1;
        loaded.planes[1].blocks[b1].reverse.as_mut().unwrap()[page1] = lpn0;
        loaded.map = fresh_map(loaded.logical_pages());
        assert!(!loaded.rebuild_map_by_planes());
        assert!(loaded.map.no_entry_written(), "nothing changed");
        loaded.rebuild_map();
        let ppb = u64::from(loaded.geometry.pages_per_block);
        let ppn = |p: usize, b: usize, page: usize| {
            (p as u64 * loaded.pages_per_plane + b as u64 * ppb + page as u64) as u32
        };
        assert_eq!(loaded.map.get(u64::from(lpn1)), Some(ppn(0, b0, page0)));
        assert_eq!(loaded.map.get(u64::from(lpn0)), Some(ppn(1, b1, page1)));
    }

    fn saved(ftl: &Ftl) -> Vec<u8> {
        let mut e = Encoder::new(Vec::new());
        ftl.save_state(&mut e).unwrap();
        e.into_inner()
    }

    #[test]
    fn a_loaded_state_saves_as_the_same_bytes_and_maps_the_same_pages() {
        let (ftl, build) = aged();
        loads_as_saved(&ftl, &build);
    }

    /// Loading a state with a byte changed anywhere never panics: a value it would index with
    /// out of range is refused (the file's checksum refuses the rest, tests/precondition_cache.rs).
    #[test]
    fn damaged_state_never_panics_and_out_of_range_values_are_refused() {
        let (ftl, build) = aged();
        let bytes = saved(&ftl);
        // Every load allocates its tables' 2 MiB blocks: 150 tries keep the test fast.
        let step = bytes.len() / 150 + 1;
        for at in (0..bytes.len()).step_by(step) {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0xa5;
            let _ = build().load_state(&mut Decoder::new(&damaged[..]));
        }
        // The next chip (after five u64 counters) past the two chips.
        let mut damaged = bytes.clone();
        damaged[40..44].copy_from_slice(&7u32.to_le_bytes());
        let error = build()
            .load_state(&mut Decoder::new(&damaged[..]))
            .unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(error.to_string().contains("next chip 7"), "{error}");
        // Cut short: always refused.
        let mut target = build();
        let error = target
            .load_state(&mut Decoder::new(&bytes[..bytes.len() - 3]))
            .unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
    }
}
