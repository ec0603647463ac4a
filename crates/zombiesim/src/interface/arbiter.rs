//! NVMe command arbitration among submission queues (`interface.arbitration`), as the
//! NVMe base specification describes it (§ Command Arbitration):
//!
//! ```text
//!  rr    a command from each queue that has one, in turn
//!  wrr   urgent queues first (round robin among them); then the weighted queues,
//!        each served up to its weight in a round (high 4, medium 2, low 1 by default,
//!        `interface.wrr_weights`, MQSim's figures; a flow's `weight` instead of its class's)
//! ```
//!
//! The arbiter only decides among queues that have a command waiting when the
//! controller can take one; with room for every command the queues submit in time
//! order and arbitration never comes into play.

use crate::config::{Arbitration, Config};
use crate::error::{Error, Result};
use crate::workload::flows::{FlowClass, FlowSpec};

/// Which queue's command the controller takes next.
#[derive(Clone, Debug)]
pub struct Arbiter {
    /// Commands per round (0: urgent, served before every weighted queue).
    weights: Vec<u32>,
    credit: Vec<u32>,
    /// Where the next search starts.
    next: usize,
}

impl Arbiter {
    /// The arbiter of `flows` under `cfg.interface`; a class or weight under round robin
    /// is refused, naming the flow.
    pub fn new(cfg: &Config, flows: &[FlowSpec]) -> Result<Self> {
        let i = &cfg.interface;
        let mut weights = Vec::with_capacity(flows.len());
        for f in flows {
            let w = match i.arbitration {
                Arbitration::Rr => {
                    if f.class.is_some() || f.weight.is_some() {
                        let key = if f.weight.is_some() {
                            "weight"
                        } else {
                            "class"
                        };
                        return Err(Error::config(
                            "interface.arbitration",
                            format!(
                                "flow `{}` gives {key}, which only weighted round robin reads: set \
                                 interface.arbitration = \"wrr\" (or leave {key} out)",
                                f.name
                            ),
                        ));
                    }
                    1
                }
                Arbitration::Wrr => match (f.class, f.weight) {
                    (Some(FlowClass::Urgent), _) => 0,
                    (_, Some(w)) => w,
                    (Some(FlowClass::High), None) => i.wrr_weights[0],
                    (Some(FlowClass::Medium) | None, None) => i.wrr_weights[1],
                    (Some(FlowClass::Low), None) => i.wrr_weights[2],
                },
            };
            weights.push(w);
        }
        Ok(Arbiter {
            credit: weights.clone(),
            weights,
            next: 0,
        })
    }

    /// The weight of queue `i` (0: urgent).
    pub fn weight(&self, i: usize) -> u32 {
        self.weights[i]
    }

    /// Among the queues with a command waiting (`waiting(i)`), the one served next;
    /// `None` when none waits.
    pub fn pick(&mut self, waiting: impl Fn(usize) -> bool) -> Option<usize> {
        let n = self.weights.len();
        let order = |start: usize| (0..n).map(move |k| (start + k) % n);
        if let Some(i) = order(self.next).find(|&i| self.weights[i] == 0 && waiting(i)) {
            self.next = (i + 1) % n;
            return Some(i);
        }
        for _round in 0..2 {
            if let Some(i) = order(self.next).find(|&i| self.credit[i] > 0 && waiting(i)) {
                self.credit[i] -= 1;
                // A queue is served up to its weight before the next one's turn.
                self.next = if self.credit[i] == 0 { (i + 1) % n } else { i };
                return Some(i);
            }
            // Every waiting queue has spent its credit: a new round.
            self.credit.copy_from_slice(&self.weights);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::flows::parse;

    fn arbiter(arbitration: Arbitration, rest: &str) -> Result<Arbiter> {
        let mut cfg = Config::default();
        cfg.interface.arbitration = arbitration;
        let flows = parse(&format!("flows:{rest}"), rest)?;
        Arbiter::new(&cfg, &flows)
    }

    #[test]
    fn round_robin_takes_each_waiting_queue_in_turn() {
        let mut a = arbiter(Arbitration::Rr, "a=randread,b=randread,c=randread").unwrap();
        let picks: Vec<_> = (0..6).map(|_| a.pick(|_| true).unwrap()).collect();
        assert_eq!(picks, [0, 1, 2, 0, 1, 2]);
        // A queue with nothing waiting is skipped.
        let picks: Vec<_> = (0..4).map(|_| a.pick(|i| i != 1).unwrap()).collect();
        assert_eq!(picks, [0, 2, 0, 2]);
        assert_eq!(a.pick(|_| false), None);
    }

    #[test]
    fn weighted_round_robin_serves_by_weight_and_urgent_first() {
        let mut a = arbiter(
            Arbitration::Wrr,
            "a=randread:class=high,b=randread:class=low",
        )
        .unwrap();
        let picks: Vec<_> = (0..10).map(|_| a.pick(|_| true).unwrap()).collect();
        assert_eq!(picks, [0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
        let mut a = arbiter(
            Arbitration::Wrr,
            "a=randread:weight=2,u=randread:class=urgent,b=randread",
        )
        .unwrap();
        assert_eq!(a.weight(2), 2, "no class: medium");
        let picks: Vec<_> = (0..3).map(|_| a.pick(|_| true).unwrap()).collect();
        assert_eq!(picks, [1, 1, 1]);
        let picks: Vec<_> = (0..4).map(|_| a.pick(|i| i != 1).unwrap()).collect();
        assert_eq!(picks, [2, 2, 0, 0]);
    }

    #[test]
    fn a_class_or_weight_under_round_robin_is_refused_naming_the_flow() {
        let e = arbiter(Arbitration::Rr, "a=randread,b=randwrite:weight=4")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("flow `b`") && e.contains("weight") && e.contains("wrr"),
            "{e}"
        );
    }
}
