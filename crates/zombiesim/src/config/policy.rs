//! `gc.policy`: the victim-selection policy, written as `name` or `name:param`.
//!
//! Beside the built-in policies, [`victim_policies!`] is the registry of the others:
//! one line per policy names its module under `gc/`, its name in `gc.policy`, a line on
//! what it does, and whether it reads the device's zombie counts. The configuration
//! reads the names from it, `gc::build` the constructors (each module's `build`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The registry of victim policies beyond the built-in ones, one line each:
/// `(module under gc/, name, syntax and what it does, zombie-aware)`. The macro hands
/// the lines to `$callback`, so the configuration and `gc` read the same list.
macro_rules! victim_policies {
    ($callback:ident) => {
        $callback! {
            (z_uncapped, "z-greedy-uncapped", "z-greedy-uncapped (z-greedy without its cap: a known zombie counts as dead)", true),
        }
    };
}
pub(crate) use victim_policies;

/// The registered policies' names, syntax lines and zombie-awareness, by index.
macro_rules! registered_names {
    ($(($module:ident, $name:literal, $about:literal, $zombie:literal),)*) => {
        /// The registered policies (name, syntax and what it does, zombie-aware).
        pub const REGISTERED: &[(&str, &str, bool)] = &[$(($name, $about, $zombie)),*];
    };
}
victim_policies!(registered_names);

/// A victim policy and its parameter, as named in configs and on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum PolicySpec {
    /// Fewest valid pages (`greedy`).
    Greedy,
    /// LFS cost-benefit `i·a/(2v)` (`cost-benefit`).
    CostBenefit,
    /// Oldest closed block first (`fifo`).
    Fifo,
    /// Uniformly random closed block (`random`).
    Random,
    /// Sample `d` closed blocks, take the one with the fewest valid pages (`d-choices:d`).
    DChoices(u32),
    /// Greedy among the `w` oldest closed blocks (`windowed-greedy:w`).
    WindowedGreedy(u32),
    /// 000 eq. 2: most `i − min(z, i/2)` (invalid pages, zombies discounted) (`z-greedy`).
    ZGreedy,
    /// 000 eq. 3: `(i − min(z, i/2))·a/(2v)` (`z-cost-benefit`).
    ZCostBenefit,
    /// Greedy, skipping blocks whose zombie share of valid pages exceeds `p`% while any
    /// other candidate exists (003 §2.2, `greedy-delay:p`).
    GreedyDelay(u32),
    /// Greedy that spares blocks whose dead pages hold popular pooled values (001 §IV-D,
    /// `popularity`).
    Popularity,
    /// z-greedy scoring with zombie marks taken from the future of the run: a valid page
    /// is a zombie once its version dies within `gc.oracle_horizon` host page writes
    /// (`oracle`; a ceiling, not a real policy: `sim::oracle`).
    Oracle,
    /// A policy of the registry ([`victim_policies!`]): its index in [`REGISTERED`].
    Registered(u16),
}

impl PolicySpec {
    /// Every policy name with its syntax, for listings and error messages.
    pub const SYNTAX: &'static [&'static str] = &[
        "greedy",
        "cost-benefit",
        "fifo",
        "random",
        "d-choices:D",
        "windowed-greedy:W",
        "z-greedy",
        "z-cost-benefit",
        "greedy-delay:P",
        "popularity",
        "oracle",
    ];

    /// Whether the policy looks at the device's zombie counts.
    pub fn zombie_aware(self) -> bool {
        match self {
            PolicySpec::Registered(index) => REGISTERED[index as usize].2,
            _ => matches!(
                self,
                PolicySpec::ZGreedy
                    | PolicySpec::ZCostBenefit
                    | PolicySpec::GreedyDelay(_)
                    | PolicySpec::Oracle
            ),
        }
    }

    /// Every policy's syntax: the built-in ones and the registry's.
    pub fn known() -> String {
        let registered = REGISTERED.iter().map(|(_, about, _)| *about);
        let all: Vec<&str> = Self::SYNTAX.iter().copied().chain(registered).collect();
        all.join(", ")
    }
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicySpec::Greedy => f.write_str("greedy"),
            PolicySpec::CostBenefit => f.write_str("cost-benefit"),
            PolicySpec::Fifo => f.write_str("fifo"),
            PolicySpec::Random => f.write_str("random"),
            PolicySpec::DChoices(d) => write!(f, "d-choices:{d}"),
            PolicySpec::WindowedGreedy(w) => write!(f, "windowed-greedy:{w}"),
            PolicySpec::ZGreedy => f.write_str("z-greedy"),
            PolicySpec::ZCostBenefit => f.write_str("z-cost-benefit"),
            PolicySpec::GreedyDelay(p) => write!(f, "greedy-delay:{p}"),
            PolicySpec::Popularity => f.write_str("popularity"),
            PolicySpec::Oracle => f.write_str("oracle"),
            PolicySpec::Registered(index) => f.write_str(REGISTERED[*index as usize].0),
        }
    }
}

impl FromStr for PolicySpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (name, param) = match s.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (s, None),
        };
        let need = |what: &str| -> Result<u32, String> {
            let p = param.ok_or_else(|| format!("`{name}` needs a parameter: `{name}:{what}`"))?;
            match p.parse::<u32>() {
                Ok(v) if v >= 1 => Ok(v),
                _ => Err(format!(
                    "`{s}`: {what} must be a whole number of at least 1"
                )),
            }
        };
        let none = |v: PolicySpec| -> Result<PolicySpec, String> {
            match param {
                Some(_) => Err(format!("`{name}` takes no parameter")),
                None => Ok(v),
            }
        };
        match name {
            "greedy" => none(PolicySpec::Greedy),
            "cost-benefit" | "cb" => none(PolicySpec::CostBenefit),
            "fifo" => none(PolicySpec::Fifo),
            "random" => none(PolicySpec::Random),
            "d-choices" => Ok(PolicySpec::DChoices(need("D")?)),
            "windowed-greedy" => Ok(PolicySpec::WindowedGreedy(need("W")?)),
            "z-greedy" => none(PolicySpec::ZGreedy),
            "z-cost-benefit" | "z-cb" => none(PolicySpec::ZCostBenefit),
            "greedy-delay" => Ok(PolicySpec::GreedyDelay(need("P")?)),
            "popularity" => none(PolicySpec::Popularity),
            "oracle" => none(PolicySpec::Oracle),
            _ => match REGISTERED.iter().position(|(n, _, _)| *n == name) {
                Some(index) => none(PolicySpec::Registered(index as u16)),
                None => Err(format!(
                    "unknown policy `{s}` (known: {})",
                    PolicySpec::known()
                )),
            },
        }
    }
}

impl TryFrom<String> for PolicySpec {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl From<PolicySpec> for String {
    fn from(p: PolicySpec) -> String {
        p.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for s in [
            "greedy",
            "cost-benefit",
            "fifo",
            "random",
            "d-choices:10",
            "windowed-greedy:64",
            "z-greedy",
            "z-cost-benefit",
            "greedy-delay:50",
            "popularity",
            "oracle",
        ] {
            assert_eq!(s.parse::<PolicySpec>().unwrap().to_string(), s);
        }
        assert!("d-choices".parse::<PolicySpec>().is_err());
        assert!("d-choices:0".parse::<PolicySpec>().is_err());
        assert!("greedy:3".parse::<PolicySpec>().is_err());
        assert!("oracle:3".parse::<PolicySpec>().is_err());
        assert!("gredy".parse::<PolicySpec>().unwrap_err().contains("known"));
    }
}
