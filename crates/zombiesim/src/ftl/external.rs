//! Policies decided outside the simulator and given to a run (the Python binding's
//! `victim=` and `placement=`): built into the FTL with it, in place of what
//! `gc.policy` and `ftl.placement = "python:K"` would otherwise leave to the core.

use crate::gc::Chooser;
use crate::placement::Placer;
use std::fmt;
use std::sync::Arc;

/// What a run's FTL asks outside the simulator (nothing, by default).
#[derive(Clone, Default)]
pub struct ExternalPolicies {
    /// Chooses every GC unit's victims ([`crate::gc::External`]).
    pub victim: Option<Arc<dyn Chooser>>,
    /// Places host writes under `ftl.placement = "python:K"`
    /// ([`crate::placement::ExternalPlacement`]).
    pub placer: Option<Arc<dyn Placer>>,
}

impl ExternalPolicies {
    /// Whether nothing is asked outside.
    pub fn is_empty(&self) -> bool {
        self.victim.is_none() && self.placer.is_none()
    }
}

impl fmt::Debug for ExternalPolicies {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExternalPolicies")
            .field("victim", &self.victim.as_ref().map(|v| v.name()))
            .field("placer", &self.placer.as_ref().map(|p| p.name()))
            .finish()
    }
}
