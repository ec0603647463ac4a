//! `gc.policy`: the victim-selection policy, written as `name` or `name:param`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

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
        matches!(
            self,
            PolicySpec::ZGreedy
                | PolicySpec::ZCostBenefit
                | PolicySpec::GreedyDelay(_)
                | PolicySpec::Oracle
        )
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
            _ => Err(format!(
                "unknown policy `{s}` (known: {})",
                PolicySpec::SYNTAX.join(", ")
            )),
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
