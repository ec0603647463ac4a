//! `flows:NAME=BODY,NAME=BODY,...`: several request streams, each with its own NVMe
//! submission queue, run together on one device (timing mode).
//!
//! ```text
//!  flows:a=randread:qd=1,b=randwrite:qd=32:class=low
//!        └┬┘ └──┬───┘ └─┬┘
//!       name  workload  flow keys (`:`-separated, as are the workload's own keys)
//! ```
//!
//! A body is a workload (any synthetic one, or a shorthand: `randread`, `randwrite`,
//! `seqread`, `seqwrite`) and `key=value` items separated by `:`. The flow's own keys
//! are `qd` (its queue depth, default 1), `class` (`urgent`, `high`, `medium`, `low`:
//! NVMe weighted round robin, `interface.arbitration = "wrr"`) and `weight` (its WRR
//! weight, instead of its class's); every other item goes to the workload. A
//! shorthand without a length runs [`SHORTHAND_REQUESTS`] requests.

use super::keys::WorkloadSpec;
use crate::error::{Error, Result};

/// Requests a shorthand flow runs when it names no length.
pub const SHORTHAND_REQUESTS: u64 = 20_000;

/// The most flows one run takes.
pub const MAX_FLOWS: usize = 64;

/// An NVMe arbitration class (`class=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowClass {
    Urgent,
    High,
    Medium,
    Low,
}

impl FlowClass {
    pub fn name(self) -> &'static str {
        match self {
            FlowClass::Urgent => "urgent",
            FlowClass::High => "high",
            FlowClass::Medium => "medium",
            FlowClass::Low => "low",
        }
    }
}

/// One flow of a `flows:` spec.
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub name: String,
    /// The flow's own workload.
    pub workload: WorkloadSpec,
    pub queue_depth: u32,
    /// `None` when neither `class` nor `weight` was given.
    pub class: Option<FlowClass>,
    pub weight: Option<u32>,
}

/// The flows of a `flows:` spec, in the order given.
pub fn parse(text: &str, rest: &str) -> Result<Vec<FlowSpec>> {
    let bad = |msg: String| Error::workload(text, msg);
    let mut flows: Vec<FlowSpec> = Vec::new();
    for item in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, body) = item
            .split_once('=')
            .ok_or_else(|| bad(format!("`{item}` is not `NAME=WORKLOAD[:key=value...]`")))?;
        let name = name.trim();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(bad(format!(
                "flow name `{name}`: use letters, digits, `_` and `-`"
            )));
        }
        if flows.iter().any(|f| f.name == name) {
            return Err(bad(format!("flow `{name}` given twice")));
        }
        flows.push(flow(text, name, body)?);
    }
    if flows.is_empty() {
        return Err(bad(
            "no flow: give `flows:NAME=WORKLOAD[:key=value...],...`, e.g. \
             `flows:a=randread:qd=1,b=randwrite:qd=32`"
                .into(),
        ));
    }
    if flows.len() > MAX_FLOWS {
        return Err(bad(format!("{} flows: at most {MAX_FLOWS}", flows.len())));
    }
    Ok(flows)
}

fn flow(text: &str, name: &str, body: &str) -> Result<FlowSpec> {
    let bad = |msg: String| Error::workload(text, format!("flow `{name}`: {msg}"));
    let mut parts = body.split(':').map(str::trim);
    let kind = parts.next().unwrap_or_default();
    let (workload, mut keys): (&str, Vec<String>) = match kind {
        "randread" => ("uniform", vec!["read=1".into()]),
        "randwrite" => ("uniform", vec![]),
        "seqread" => ("sequential", vec!["read=1".into(), "reads=same".into()]),
        "seqwrite" => ("sequential", vec![]),
        "flows" => return Err(bad("a flow cannot hold flows".into())),
        other => (other, vec![]),
    };
    let shorthand = workload != kind;
    let (mut queue_depth, mut class, mut weight) = (1u32, None, None);
    for part in parts.filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("`{part}` is not `key=value`")))?;
        let (k, v) = (k.trim(), v.trim());
        match k {
            "qd" => {
                queue_depth = v
                    .parse::<u32>()
                    .ok()
                    .filter(|&q| (1..=65_536).contains(&q))
                    .ok_or_else(|| bad(format!("qd={v}: a queue depth from 1 to 65536")))?;
            }
            "class" => {
                class = Some(match v {
                    "urgent" => FlowClass::Urgent,
                    "high" => FlowClass::High,
                    "medium" => FlowClass::Medium,
                    "low" => FlowClass::Low,
                    _ => return Err(bad(format!("class={v}: one of urgent, high, medium, low"))),
                });
            }
            "weight" => {
                weight = Some(
                    v.parse::<u32>()
                        .ok()
                        .filter(|&w| (1..=256).contains(&w))
                        .ok_or_else(|| bad(format!("weight={v}: a whole number from 1 to 256")))?,
                );
            }
            _ => keys.push(format!("{k}={v}")),
        }
    }
    if class == Some(FlowClass::Urgent) && weight.is_some() {
        return Err(bad(
            "weight: an urgent flow is served before every weighted one, and has no weight".into(),
        ));
    }
    let has_length = keys.iter().any(|k| {
        ["drive_writes=", "requests=", "bytes="]
            .iter()
            .any(|p| k.starts_with(p))
    });
    if shorthand && !has_length {
        keys.push(format!("requests={SHORTHAND_REQUESTS}"));
    }
    let spec_text = if keys.is_empty() {
        workload.to_string()
    } else {
        format!("{workload}:{}", keys.join(","))
    };
    let spec = WorkloadSpec::parse(&spec_text).map_err(|e| bad(e.to_string()))?;
    if matches!(spec.name(), "oltp" | "fs") {
        return Err(bad(format!(
            "`{}` needs the host model; a flow is a block request stream",
            spec.name()
        )));
    }
    Ok(FlowSpec {
        name: name.to_string(),
        workload: spec,
        queue_depth,
        class,
        weight,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows(rest: &str) -> Result<Vec<FlowSpec>> {
        parse(&format!("flows:{rest}"), rest)
    }

    #[test]
    fn shorthands_expand_and_flow_keys_are_taken_out() {
        let f = flows("a=randread:qd=1,b=randwrite:qd=32:class=low,c=zipf:theta=0.9:drive_writes=0.1:weight=3").unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].workload.as_str(), "uniform:read=1,requests=20000");
        assert_eq!((f[1].queue_depth, f[1].class), (32, Some(FlowClass::Low)));
        assert_eq!(f[1].workload.as_str(), "uniform:requests=20000");
        assert_eq!(f[2].workload.as_str(), "zipf:theta=0.9,drive_writes=0.1");
        assert_eq!((f[2].queue_depth, f[2].weight), (1, Some(3)));
    }

    #[test]
    fn bad_flows_name_the_flow_and_key() {
        for (rest, needle) in [
            ("a=randread:qd=0", "flow `a`: qd=0"),
            ("a=randread:depth=4", "flow `a`"),
            ("a=randread,a=randwrite", "flow `a` given twice"),
            ("a=randread:class=top", "class=top"),
            ("a=randread:class=urgent:weight=2", "weight"),
            ("a=oltp", "host model"),
            ("a", "is not `NAME=WORKLOAD"),
            ("", "no flow"),
        ] {
            let e = flows(rest).unwrap_err().to_string();
            assert!(e.contains(needle), "{rest}: {e}");
        }
    }
}
