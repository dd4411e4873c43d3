//! The drive a run starts from: built from [`DriveInputs`] alone, then preconditioned (or
//! loaded from a snapshot of the same inputs, run/precondition_cache.rs).
//!
//! `DriveInputs` is everything that shapes the drive's state when the trace starts, and the
//! only thing the code that builds and preconditions it receives (with the trace's footprint):
//! a setting it does not carry cannot change the drive, and one it carries is in the
//! precondition cache's key, which is its serialized text. The host and device schedulers,
//! the interconnect, timing (but the program time under `[variation]`), energy, the write
//! buffer and the replay options are not in it, so runs that differ only in those share one
//! snapshot.

use serde::{Serialize, Serializer};

use crate::config::Config;
use crate::ftl::{
    precondition, BlockChoice, Footprint, Ftl, FtlConfig, PreconditionConfig, PreconditionReport,
    VariationConfig,
};
use crate::geometry::Geometry;
use crate::Error;

/// Everything that shapes the drive before the trace starts (see the module's comment).
#[derive(Debug, Clone, Serialize)]
pub struct DriveInputs<'a> {
    pub geometry: &'a Geometry,
    /// The FTL's rules, static placement among them (`ftl.allocation`,
    /// `ftl.stripe_unit_pages`). Some act only during the run (the cached mapping table's
    /// size) and are in the key all the same: kept whole, no rule added later can be left out
    /// by mistake. The one left out is `ftl.block_choice`, which the FTL starts to apply only
    /// after preconditioning (`Ftl::start_block_choice`), so that VIOS and the schedulers it
    /// is compared with start from one drive.
    #[serde(serialize_with = "ftl_without_block_choice")]
    pub ftl: &'a FtlConfig,
    pub precondition: &'a PreconditionConfig,
    /// `[variation]` and the nominal program time it scales, when it is on.
    pub variation: Option<VariationInputs<'a>>,
    /// The run's seed: the fill's start, the aging picks and the variation model's rates.
    pub seed: u64,
    /// `--check-integrity`: the drive then carries the version of every page.
    pub check_integrity: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct VariationInputs<'a> {
    pub config: &'a VariationConfig,
    /// `timing.page_program_ns`.
    pub nominal_program_ns: u64,
}

/// `[ftl]` as it shapes the drive: `ftl.block_choice` at its default whatever it is.
fn ftl_without_block_choice<S: Serializer>(ftl: &&FtlConfig, out: S) -> Result<S::Ok, S::Error> {
    FtlConfig {
        block_choice: BlockChoice::default(),
        ..(*ftl).clone()
    }
    .serialize(out)
}

impl<'a> DriveInputs<'a> {
    pub fn of(config: &'a Config, seed: u64, check_integrity: bool) -> Self {
        DriveInputs {
            geometry: &config.geometry,
            ftl: &config.ftl,
            precondition: &config.precondition,
            variation: config.variation.enabled.then_some(VariationInputs {
                config: &config.variation,
                nominal_program_ns: config.timing.page_program_ns,
            }),
            seed,
            check_integrity,
        }
    }

    /// The drive as it leaves the factory: nothing written.
    pub fn build(&self) -> Result<Ftl, Error> {
        let mut ftl = Ftl::new(
            self.geometry,
            self.ftl,
            self.ftl.static_map(self.geometry),
            self.check_integrity,
        );
        if let Some(variation) = &self.variation {
            ftl.enable_variation(variation.config, variation.nominal_program_ns, self.seed)?;
        }
        Ok(ftl)
    }

    /// Precondition `ftl`, built by [`DriveInputs::build`], for a trace of `footprint`.
    pub fn precondition(
        &self,
        ftl: &mut Ftl,
        footprint: Option<&Footprint>,
    ) -> Result<PreconditionReport, Error> {
        precondition(ftl, self.precondition, footprint, self.seed)
    }
}
