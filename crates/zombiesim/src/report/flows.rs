//! The `flows` section: each flow of a `flows:` workload, its latency against running
//! alone, and the fairness of the device among them.

use crate::latency::{LatencyReport, Throughput};
use serde::Serialize;

/// One flow's figures.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowReport {
    pub name: String,
    /// The flow's own workload, as run.
    pub workload: String,
    pub queue_depth: u32,
    /// Its WRR class (`null` under round robin or when it gave none).
    pub class: Option<String>,
    /// Commands per arbitration round (0: urgent; 1 under round robin).
    pub weight: u32,
    /// Requests it completed in the measured phase, and their share of all.
    pub requests: u64,
    pub share: f64,
    pub throughput: Throughput,
    pub latency: LatencyReport,
    /// Its mean latency when it ran alone on the same preconditioned device, µs (0 when
    /// the run was interrupted before the alone runs).
    pub alone_mean_us: f64,
    /// Mean latency together ÷ alone (1: no interference).
    pub slowdown: Option<f64>,
    /// Its latency over the phase: `[t_s, mean_us]`, the mean latency of the requests
    /// it issued since the previous point and when the last of them completed (between
    /// 128 and 256 points once it issued 4,096 requests).
    pub series: Vec<[f64; 2]>,
}

/// Every flow, and the fairness among them.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowsReport {
    /// `rr` or `wrr` (`interface.arbitration`).
    pub arbitration: String,
    /// The flow that ran out first, which ended the measured phase.
    pub ended_by: String,
    /// min slowdown ÷ max slowdown over the flows (MQSim's fairness; 1 = fair),
    /// `null` when a flow has no slowdown.
    pub fairness: Option<f64>,
    pub flows: Vec<FlowReport>,
}
