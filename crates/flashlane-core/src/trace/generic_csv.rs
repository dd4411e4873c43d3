//! A delimited-text reader driven by a column mapping, for layouts without a dedicated reader.
//!
//! The mapping is a [`GenericCsvSpec`], usually parsed from a one-line string such as
//! `time=0:ms,op=3:Read/Write,offset=4:bytes,size=5:bytes,delimiter=,` (syntax in
//! docs/traces.md). Units are always explicit: a spec without them is rejected. `keep=` clauses
//! keep only the rows whose column holds one of the given values (event logs that mix kinds).

use std::io::BufRead;
use std::path::PathBuf;

use super::common::{
    line_reader_impl, parse_decimal_scaled, parse_u32, show, trim, LineError, LineLayout,
    LineReader, Parsed, SECTOR_BYTES,
};
use super::{Op, ReaderOptions, TraceFormat, TraceRecord};

/// Columns past this are rejected by the spec parser: no real trace is that wide.
const MAX_COLUMNS: usize = 1024;

/// Unit of the time column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Ns,
    Us,
    Ms,
    S,
    /// Windows ticks of 100 ns.
    Ticks100ns,
}

impl TimeUnit {
    /// Decimal digits below the unit that still fall on whole nanoseconds, e.g. 6 for ms.
    fn ns_digits(self) -> u32 {
        match self {
            TimeUnit::Ns => 0,
            TimeUnit::Ticks100ns => 2,
            TimeUnit::Us => 3,
            TimeUnit::Ms => 6,
            TimeUnit::S => 9,
        }
    }

    fn parse(name: &str) -> Option<TimeUnit> {
        Some(match name {
            "ns" => TimeUnit::Ns,
            "us" => TimeUnit::Us,
            "ms" => TimeUnit::Ms,
            "s" => TimeUnit::S,
            "ticks100ns" => TimeUnit::Ticks100ns,
            _ => return None,
        })
    }
}

/// Unit of the offset and size columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressUnit {
    Bytes,
    /// 512-byte sectors.
    Sectors,
}

impl AddressUnit {
    fn parse(name: &str) -> Option<AddressUnit> {
        Some(match name {
            "bytes" => AddressUnit::Bytes,
            "sectors" => AddressUnit::Sectors,
            _ => return None,
        })
    }

    fn bytes_per_unit(self) -> u64 {
        match self {
            AddressUnit::Bytes => 1,
            AddressUnit::Sectors => SECTOR_BYTES,
        }
    }
}

/// How columns are separated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delimiter {
    Byte(u8),
    /// Runs of spaces and tabs.
    Whitespace,
}

/// Column mapping for [`GenericCsvReader`]. Columns are 0-based.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenericCsvSpec {
    pub delimiter: Delimiter,
    /// Skip the first non-blank line.
    pub has_header: bool,
    pub time_column: usize,
    pub time_unit: TimeUnit,
    pub op_column: usize,
    /// Tokens meaning read / write / "not a request, skip and count"; compared ignoring ASCII case.
    pub read_tokens: Vec<String>,
    pub write_tokens: Vec<String>,
    pub skip_tokens: Vec<String>,
    pub offset_column: usize,
    pub offset_unit: AddressUnit,
    pub size_column: usize,
    pub size_unit: AddressUnit,
    pub device_column: Option<usize>,
    pub stream_column: Option<usize>,
    /// Row filters (`keep=COLUMN:VALUE[|VALUE...]`): a row is read only when every filter's
    /// column holds one of its values; other rows are passed over without being parsed.
    pub keep: Vec<RowFilter>,
}

/// One `keep=COLUMN:VALUE[|VALUE...]` clause of a [`GenericCsvSpec`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowFilter {
    /// 0-based column.
    pub column: usize,
    /// The values that keep a row, compared exactly (letter case matters: blkparse's `M` and
    /// `m` are different events) after trimming surrounding whitespace.
    pub values: Vec<String>,
}

impl std::fmt::Display for RowFilter {
    /// The clause as written in a spec, e.g. `keep=5:D|C`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "keep={}:{}", self.column, self.values.join("|"))
    }
}

/// Splits `COLUMN[:REST]`.
fn column_and_rest<'a>(key: &str, value: &'a str) -> Result<(usize, Option<&'a str>), String> {
    let (column, rest) = match value.split_once(':') {
        Some((column, rest)) => (column, Some(rest)),
        None => (value, None),
    };
    let column = column
        .parse::<usize>()
        .map_err(|_| format!("`{key}=`: column must be a 0-based column number, got {column:?}"))?;
    if column >= MAX_COLUMNS {
        return Err(format!(
            "`{key}=`: column {column} is beyond the last supported column ({})",
            MAX_COLUMNS - 1
        ));
    }
    Ok((column, rest))
}

fn tokens(list: &str) -> Vec<String> {
    list.split('|')
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

impl std::str::FromStr for GenericCsvSpec {
    type Err = String;

    /// Parses `key=value` pairs separated by commas. See docs/traces.md for every key.
    fn from_str(text: &str) -> Result<Self, String> {
        let mut delimiter = Delimiter::Byte(b',');
        let mut has_header = false;
        let mut time = None;
        let mut op = None;
        let mut offset = None;
        let mut size = None;
        let mut device_column = None;
        let mut stream_column = None;
        let mut keep = Vec::new();
        let mut rest = text.trim();
        while !rest.is_empty() {
            let Some((key, after)) = rest.split_once('=') else {
                return Err(format!("expected `key=value`, got {rest:?}"));
            };
            let key = key.trim();
            let value;
            if key == "delimiter" {
                // The delimiter may itself be a comma, so it is one character or a name.
                let named = [
                    ("comma", Delimiter::Byte(b',')),
                    ("tab", Delimiter::Byte(b'\t')),
                    ("semicolon", Delimiter::Byte(b';')),
                    ("space", Delimiter::Byte(b' ')),
                    ("whitespace", Delimiter::Whitespace),
                ];
                let word_end = after.find(',').unwrap_or(after.len());
                if let Some(&(name, chosen)) =
                    named.iter().find(|(name, _)| *name == &after[..word_end])
                {
                    delimiter = chosen;
                    rest = &after[name.len()..];
                } else {
                    let mut chars = after.chars();
                    let Some(c) = chars.next() else {
                        return Err("`delimiter=` needs a character or a name \
                                    (comma, tab, semicolon, space, whitespace)"
                            .into());
                    };
                    if !c.is_ascii() || c == '\n' || c == '\r' {
                        return Err(format!(
                            "`delimiter=`: {c:?} is not a usable ASCII delimiter"
                        ));
                    }
                    delimiter = Delimiter::Byte(c as u8);
                    rest = chars.as_str();
                }
                if !rest.is_empty() {
                    rest = rest.strip_prefix(',').ok_or_else(|| {
                        format!("`delimiter=` takes one character or a name, got {after:?}")
                    })?;
                }
                continue;
            }
            match after.split_once(',') {
                Some((v, r)) => {
                    value = v.trim();
                    rest = r;
                }
                None => {
                    value = after.trim();
                    rest = "";
                }
            }
            match key {
                "header" => {
                    has_header = match value {
                        "yes" | "true" | "1" => true,
                        "no" | "false" | "0" => false,
                        _ => return Err(format!("`header=` must be yes or no, got {value:?}")),
                    }
                }
                "time" => {
                    let (column, unit) = column_and_rest(key, value)?;
                    let unit =
                        unit.ok_or("`time=` needs a unit: time=COLUMN:ns|us|ms|s|ticks100ns")?;
                    let unit = TimeUnit::parse(unit).ok_or_else(|| {
                        format!("`time=`: unknown unit {unit:?} (ns, us, ms, s, ticks100ns)")
                    })?;
                    time = Some((column, unit));
                }
                "op" => {
                    let (column, lists) = column_and_rest(key, value)?;
                    let lists = lists.ok_or(
                        "`op=` needs the tokens: op=COLUMN:READ[|READ...]/WRITE[|WRITE...][/SKIP...]",
                    )?;
                    let mut groups = lists.split('/');
                    let read = tokens(groups.next().unwrap_or_default());
                    let write = tokens(groups.next().unwrap_or_default());
                    let skip = tokens(groups.next().unwrap_or_default());
                    if groups.next().is_some() {
                        return Err("`op=`: at most three token groups (read/write/skip)".into());
                    }
                    if read.is_empty() || write.is_empty() {
                        return Err("`op=`: needs at least one read and one write token".into());
                    }
                    op = Some((column, read, write, skip));
                }
                "offset" | "size" => {
                    let (column, unit) = column_and_rest(key, value)?;
                    let unit = unit.ok_or_else(|| {
                        format!("`{key}=` needs a unit: {key}=COLUMN:bytes|sectors")
                    })?;
                    let unit = AddressUnit::parse(unit).ok_or_else(|| {
                        format!("`{key}=`: unknown unit {unit:?} (bytes, sectors)")
                    })?;
                    if key == "offset" {
                        offset = Some((column, unit));
                    } else {
                        size = Some((column, unit));
                    }
                }
                "device" => device_column = Some(column_and_rest(key, value)?.0),
                "stream" => stream_column = Some(column_and_rest(key, value)?.0),
                "keep" => {
                    let (column, values) = column_and_rest(key, value)?;
                    let values = tokens(values.unwrap_or_default());
                    if values.is_empty() {
                        return Err(format!(
                            "`keep={value}` needs the values to keep: keep=COLUMN:VALUE[|VALUE...]"
                        ));
                    }
                    keep.push(RowFilter { column, values });
                }
                _ => {
                    return Err(format!(
                        "unknown key {key:?} (time, op, offset, size, device, stream, keep, \
                         header, delimiter)"
                    ))
                }
            }
        }
        let (time_column, time_unit) = time.ok_or("missing `time=COLUMN:UNIT`")?;
        let (op_column, read_tokens, write_tokens, skip_tokens) =
            op.ok_or("missing `op=COLUMN:READ/WRITE`")?;
        let (offset_column, offset_unit) = offset.ok_or("missing `offset=COLUMN:UNIT`")?;
        let (size_column, size_unit) = size.ok_or("missing `size=COLUMN:UNIT`")?;
        Ok(GenericCsvSpec {
            delimiter,
            has_header,
            time_column,
            time_unit,
            op_column,
            read_tokens,
            write_tokens,
            skip_tokens,
            offset_column,
            offset_unit,
            size_column,
            size_unit,
            device_column,
            stream_column,
            keep,
        })
    }
}

pub(crate) struct GenericCsvLayout {
    spec: GenericCsvSpec,
    columns_needed: usize,
    /// The spec clause that names the last column needed, for the "too few columns" error.
    widest_clause: String,
    header_pending: bool,
    fields: Vec<(usize, usize)>,
}

impl GenericCsvLayout {
    pub fn new(spec: GenericCsvSpec) -> Self {
        let clauses = [
            ("time", Some(spec.time_column)),
            ("op", Some(spec.op_column)),
            ("offset", Some(spec.offset_column)),
            ("size", Some(spec.size_column)),
            ("device", spec.device_column),
            ("stream", spec.stream_column),
        ];
        let (widest_clause, last_column) = clauses
            .iter()
            .filter_map(|&(key, column)| Some((format!("{key}="), column?)))
            .chain(spec.keep.iter().map(|f| (f.to_string(), f.column)))
            .max_by_key(|(_, column)| *column)
            .unwrap_or_default();
        let columns_needed = last_column.saturating_add(1);
        GenericCsvLayout {
            header_pending: spec.has_header,
            spec,
            columns_needed,
            widest_clause,
            fields: Vec::with_capacity(columns_needed.min(MAX_COLUMNS)),
        }
    }

    /// `true` when a `keep=` filter passes the row over; an error when a filter's
    /// column is missing. Runs on the split row before anything else is parsed: rows of
    /// other kinds may have other columns.
    fn filtered_out(&self, line: &[u8]) -> Result<bool, LineError> {
        for filter in &self.spec.keep {
            let Some(&(start, end)) = self.fields.get(filter.column) else {
                return Err(LineError::bad(format!(
                    "the spec's `{filter}` names column {}, but this row has only {} columns",
                    filter.column,
                    self.fields.len()
                )));
            };
            let field = trim(&line[start..end]);
            if !filter.values.iter().any(|v| v.as_bytes() == field) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Records the start..end of each column needed, in `self.fields`.
    fn split(&mut self, line: &[u8]) {
        self.fields.clear();
        match self.spec.delimiter {
            Delimiter::Byte(d) => {
                let mut start = 0;
                for end in memchr::memchr_iter(d, line) {
                    if self.fields.len() == self.columns_needed {
                        return;
                    }
                    self.fields.push((start, end));
                    start = end + 1;
                }
                if self.fields.len() < self.columns_needed {
                    self.fields.push((start, line.len()));
                }
            }
            Delimiter::Whitespace => {
                let mut start = None;
                for (i, b) in line.iter().enumerate() {
                    match (b.is_ascii_whitespace(), start) {
                        (false, None) => start = Some(i),
                        (true, Some(s)) => {
                            self.fields.push((s, i));
                            start = None;
                            if self.fields.len() == self.columns_needed {
                                return;
                            }
                        }
                        _ => {}
                    }
                }
                if let Some(s) = start {
                    self.fields.push((s, line.len()));
                }
            }
        }
    }
}

fn matches_any(field: &[u8], tokens: &[String]) -> bool {
    tokens
        .iter()
        .any(|t| field.eq_ignore_ascii_case(t.as_bytes()))
}

impl LineLayout for GenericCsvLayout {
    fn format(&self) -> TraceFormat {
        TraceFormat::GenericCsv
    }

    fn parse(&mut self, _line_number: u64, line: &[u8]) -> Result<Parsed, LineError> {
        if std::mem::take(&mut self.header_pending) {
            return Ok(Parsed::Ignored);
        }
        self.split(line);
        if self.filtered_out(line)? {
            return Ok(Parsed::Ignored);
        }
        if self.fields.len() < self.columns_needed {
            return Err(LineError::bad(format!(
                "expected at least {} columns (the spec's `{}` names column {}), found {}",
                self.columns_needed,
                self.widest_clause,
                self.columns_needed - 1,
                self.fields.len()
            )));
        }
        let column = |index: usize| {
            let (start, end) = self.fields[index];
            trim(&line[start..end])
        };
        let spec = &self.spec;
        let op_text = column(spec.op_column);
        let op = if matches_any(op_text, &spec.read_tokens) {
            Op::Read
        } else if matches_any(op_text, &spec.write_tokens) {
            Op::Write
        } else if matches_any(op_text, &spec.skip_tokens) {
            return Ok(Parsed::SkippedEvent);
        } else {
            return Err(LineError::bad(format!(
                "column {} (op) is neither a read token {:?} nor a write token {:?}: {:?}",
                spec.op_column,
                spec.read_tokens,
                spec.write_tokens,
                show(op_text)
            )));
        };
        let time_text = column(spec.time_column);
        let time_ns =
            parse_decimal_scaled(time_text, spec.time_unit.ns_digits()).ok_or_else(|| {
                LineError::bad(format!(
                    "column {} (time) is not a non-negative decimal number: {:?}",
                    spec.time_column,
                    show(time_text)
                ))
            })?;
        let address = |index: usize, unit: AddressUnit, name: &str| {
            let text = column(index);
            // Sub-byte fractions are meaningless; addresses must be whole numbers of units.
            super::common::parse_u64(text)
                .and_then(|v| v.checked_mul(unit.bytes_per_unit()))
                .ok_or_else(|| {
                    LineError::bad(format!(
                        "column {index} ({name}) is not a non-negative integer that fits in \
                         64-bit bytes: {:?}",
                        show(text)
                    ))
                })
        };
        let offset_bytes = address(spec.offset_column, spec.offset_unit, "offset")?;
        let size_bytes = address(spec.size_column, spec.size_unit, "size")?;
        let small = |index: Option<usize>, name: &str| -> Result<Option<u32>, LineError> {
            let Some(index) = index else { return Ok(None) };
            let text = column(index);
            parse_u32(text).map(Some).ok_or_else(|| {
                LineError::bad(format!(
                    "column {index} ({name}) is not a 32-bit non-negative integer: {:?}",
                    show(text)
                ))
            })
        };
        let device = small(spec.device_column, "device")?.unwrap_or(0);
        let stream = small(spec.stream_column, "stream")?.unwrap_or(device);
        Ok(Parsed::Record(TraceRecord {
            time_ns,
            device,
            stream,
            offset_bytes,
            size_bytes,
            op,
        }))
    }
}

/// Streaming reader for delimited text described by a [`GenericCsvSpec`].
pub struct GenericCsvReader {
    inner: LineReader<GenericCsvLayout>,
}

impl GenericCsvReader {
    pub fn new(
        path: PathBuf,
        input: Box<dyn BufRead>,
        spec: GenericCsvSpec,
        options: &ReaderOptions,
    ) -> Self {
        GenericCsvReader {
            inner: LineReader::new(path, input, GenericCsvLayout::new(spec), options),
        }
    }
}

line_reader_impl!(GenericCsvReader);
