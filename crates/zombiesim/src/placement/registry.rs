//! The registry of placement policies and `ftl.placement`, the spec that names one.

use super::{
    dac, external, gc_age, midas, oracle, sepbit, write_count, Placement, PlacementEntry, Refusal,
    StreamPlan, StreamsWanted,
};
use std::fmt;
use std::str::FromStr;

/// Every placement policy. The first is the default.
pub const REGISTRY: &[PlacementEntry] = &[
    dac::ENTRY,
    gc_age::ENTRY,
    sepbit::ENTRY,
    write_count::ENTRY,
    midas::ENTRY,
    oracle::ENTRY,
    external::ENTRY,
];

/// `ftl.placement`: a registered policy and its parameter (the default: the first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlacementSpec {
    index: u16,
    param: Option<u32>,
}

impl PlacementSpec {
    /// Its registry entry.
    pub fn entry(self) -> &'static PlacementEntry {
        &REGISTRY[self.index as usize]
    }

    /// It reads the run's future ([`PlacementEntry::future`]).
    pub fn reads_future(self) -> bool {
        self.entry().future
    }

    /// It is the placement oracle's envelope: `oracle` with no K, the best of its
    /// members (`sim::oracle::envelope`), never built itself.
    pub fn is_envelope(self) -> bool {
        self.entry().future && self.param.is_none()
    }

    /// Its parameter.
    pub fn param(self) -> Option<u32> {
        self.param
    }

    /// Whether it is the default policy.
    pub fn is_default(self) -> bool {
        self.index == 0
    }

    /// The streams it needs with `regions` hot/cold regions; an error names the key to
    /// change and why.
    pub fn streams(self, regions: u32) -> Result<StreamsWanted, Refusal> {
        (self.entry().streams)(self.param, regions)
    }

    /// The policy, over `plan`.
    pub fn build(self, plan: &StreamPlan) -> Box<dyn Placement> {
        (self.entry().build)(self.param, plan)
    }
}

impl fmt::Display for PlacementSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.param {
            Some(p) => write!(f, "{}:{p}", self.entry().name),
            None => f.write_str(self.entry().name),
        }
    }
}

impl FromStr for PlacementSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (name, param) = match s.split_once(':') {
            Some((n, p)) => {
                let p = p
                    .parse::<u32>()
                    .map_err(|_| format!("`{s}`: the parameter must be a whole number"))?;
                (n, Some(p))
            }
            None => (s, None),
        };
        let index = REGISTRY
            .iter()
            .position(|e| e.name == name)
            .ok_or_else(|| {
                let known: Vec<&str> = REGISTRY.iter().map(|e| e.about).collect();
                format!("unknown placement `{s}` (known: {})", known.join("; "))
            })?;
        let spec = PlacementSpec {
            index: index as u16,
            param,
        };
        // The parameter's own range (settings it needs are checked with the layout).
        spec.streams(1).map_err(|(_, why)| why)?;
        Ok(spec)
    }
}

impl serde::Serialize for PlacementSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for PlacementSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip_and_unknown_names_list_the_known() {
        for s in [
            "dac",
            "gc-age:3",
            "sepbit",
            "write-count:4",
            "midas",
            "midas:4",
            "oracle:6",
            "oracle",
            "python:4",
        ] {
            assert_eq!(s.parse::<PlacementSpec>().unwrap().to_string(), s);
        }
        assert!(PlacementSpec::default().is_default());
        let err = "nope".parse::<PlacementSpec>().unwrap_err();
        assert!(
            err.contains("unknown placement `nope`") && err.contains("gc-age:K"),
            "{err}"
        );
        let err = "gc-age:1".parse::<PlacementSpec>().unwrap_err();
        assert!(err.contains("at least 2"), "{err}");
        assert!("gc-age".parse::<PlacementSpec>().is_err());
        assert!("dac:2".parse::<PlacementSpec>().is_err());
    }
}
