//! `oltp`: a TPC-C-like transaction generator for the host model (000 §5.3).
//!
//! The database runs on the raw device with its own buffer cache (the host cache, with
//! `host.file_size` of one page so its writer keeps a checkpoint queue, oldest-dirtied
//! page first). Users are the closed-loop host threads; each runs whole transactions.
//!
//! ```text
//!   logical space: [ warehouse+district | item (read-only) | stock | customer | orders ][ redo log ]
//!                     0.1% (hot)           5%                 40%     25%        rest    `log`
//!
//!   new-order 45%  district upd, 10 item reads, 10 stock upd (NURand), 1 order-page upd (append)
//!   payment   43%  warehouse upd, district upd, customer upd (NURand), history append
//!   order-status 4%  customer read, 2 recent order reads
//!   delivery   4%  10 older order upd, 10 customer upd
//!   stock-level 4%  district read, 20 stock reads
//!   commit: one redo-log page written synchronously (sequential, circular), then counted
//! ```
//!
//! An update reads the page through the buffer and dirties it: the clean → dirty
//! transition is what the redo-log monitor of 000 reports as a zombie. Page popularity
//! follows TPC-C's NURand(A, 0, n−1) = ((rand(0..=A) | rand(0..n)) + C) mod n.

use super::app::{AppOp, AppSource, IoKind};
use crate::error::Result;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
struct Table {
    first: u64,
    pages: u64,
    /// NURand's A and C.
    a: u64,
    c: u64,
}

impl Table {
    fn new(first: u64, pages: u64, rng: &mut Pcg64Mcg) -> Table {
        let pages = pages.max(1);
        let a = ((pages / 4).max(1).next_power_of_two() - 1).min(pages - 1);
        Table {
            first,
            pages,
            a,
            c: rng.random_range(0..pages),
        }
    }

    fn nurand(&self, rng: &mut Pcg64Mcg) -> u64 {
        let x = rng.random_range(0..=self.a) | rng.random_range(0..self.pages);
        self.first + (x + self.c) % self.pages
    }

    fn uniform(&self, rng: &mut Pcg64Mcg) -> u64 {
        self.first + rng.random_range(0..self.pages)
    }
}

/// The order page `back` pages behind the append head.
fn order_page(orders: &Table, head: u64, back: u64) -> u64 {
    let n = orders.pages;
    orders.first + (head + n - back % n) % n
}

/// The TPC-C-like workload.
pub struct OltpWorkload {
    rng: Pcg64Mcg,
    hot: Table,
    item: Table,
    stock: Table,
    customer: Table,
    orders: Table,
    /// Next order page (append head), as an offset into `orders`.
    head: u64,
    log_first: u64,
    log_pages: u64,
    log_next: u64,
    total: u64,
    started: u64,
    queues: Vec<VecDeque<AppOp>>,
}

impl OltpWorkload {
    /// `db` = fraction of the logical space holding tables, `log_pages` = redo log size,
    /// `transactions` = how many to run, `users` = threads.
    pub fn new(
        logical_pages: u64,
        db: f64,
        log_pages: u64,
        transactions: u64,
        users: usize,
        seed: u64,
    ) -> OltpWorkload {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        let log_pages = log_pages.clamp(1, logical_pages / 2);
        let data = ((logical_pages - log_pages) as f64 * db) as u64;
        let data = data.max(64);
        let share = |f: f64| ((data as f64 * f) as u64).max(8);
        let hot_pages = share(0.001);
        let item_pages = share(0.05);
        let stock_pages = share(0.40);
        let customer_pages = share(0.25);
        let used = hot_pages + item_pages + stock_pages + customer_pages;
        let order_pages = data.saturating_sub(used).max(8);
        let mut first = 0;
        let mut next = |pages: u64, rng: &mut Pcg64Mcg| {
            let t = Table::new(first, pages, rng);
            first += pages;
            t
        };
        let hot = next(hot_pages, &mut rng);
        let item = next(item_pages, &mut rng);
        let stock = next(stock_pages, &mut rng);
        let customer = next(customer_pages, &mut rng);
        let orders = next(order_pages, &mut rng);
        OltpWorkload {
            rng,
            hot,
            item,
            stock,
            customer,
            orders,
            head: 0,
            log_first: logical_pages - log_pages,
            log_pages,
            log_next: 0,
            total: transactions,
            started: 0,
            queues: vec![VecDeque::new(); users.max(1)],
        }
    }

    /// Queue the operations of one transaction for user `u`.
    fn begin(&mut self, u: usize) {
        let rng = &mut self.rng;
        let mut q = std::mem::take(&mut self.queues[u]);
        let update = |q: &mut VecDeque<AppOp>, lpn: u64| {
            q.push_back(AppOp::Read {
                lpn,
                pages: 1,
                kind: IoKind::Data,
            });
            q.push_back(AppOp::Write {
                lpn,
                pages: 1,
                value: None,
                kind: IoKind::Data,
                id: None,
            });
        };
        let read = |q: &mut VecDeque<AppOp>, lpn: u64| {
            q.push_back(AppOp::Read {
                lpn,
                pages: 1,
                kind: IoKind::Data,
            })
        };
        let kind = rng.random_range(0..100u32);
        match kind {
            0..45 => {
                update(&mut q, self.hot.uniform(rng));
                for _ in 0..10 {
                    read(&mut q, self.item.nurand(rng));
                }
                for _ in 0..10 {
                    update(&mut q, self.stock.nurand(rng));
                }
                if rng.random_bool(0.5) {
                    self.head = (self.head + 1) % self.orders.pages;
                }
                update(&mut q, order_page(&self.orders, self.head, 0));
            }
            45..88 => {
                update(&mut q, self.hot.uniform(rng));
                update(&mut q, self.hot.uniform(rng));
                update(&mut q, self.customer.nurand(rng));
                update(&mut q, order_page(&self.orders, self.head, 1));
            }
            88..92 => {
                read(&mut q, self.customer.nurand(rng));
                let back = rng.random_range(0..16);
                read(&mut q, order_page(&self.orders, self.head, back));
                read(&mut q, order_page(&self.orders, self.head, back + 1));
            }
            92..96 => {
                let backlog = (self.orders.pages / 4).max(1);
                for i in 0..10 {
                    let page = order_page(&self.orders, self.head, backlog + i);
                    update(&mut q, page);
                    update(&mut q, self.customer.nurand(rng));
                }
            }
            _ => {
                read(&mut q, self.hot.uniform(rng));
                for _ in 0..20 {
                    read(&mut q, self.stock.nurand(rng));
                }
            }
        }
        q.push_back(AppOp::SyncWrite {
            lpn: self.log_first + self.log_next,
            pages: 1,
            kind: IoKind::Journal,
        });
        self.log_next = (self.log_next + 1) % self.log_pages;
        q.push_back(AppOp::Commit);
        self.queues[u] = q;
    }
}

impl AppSource for OltpWorkload {
    fn next_op(&mut self, thread: usize, _now: u64) -> Result<Option<(AppOp, Option<u64>)>> {
        let u = thread % self.queues.len();
        if self.queues[u].is_empty() {
            if self.started >= self.total {
                return Ok(None);
            }
            self.started += 1;
            self.begin(u);
        }
        Ok(self.queues[u].pop_front().map(|op| (op, None)))
    }

    fn progress(&self) -> Option<f64> {
        Some(self.started as f64 / self.total.max(1) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transactions_end_in_a_log_write_and_a_commit() {
        let mut w = OltpWorkload::new(100_000, 0.9, 100, 50, 2, 7);
        let mut commits = 0;
        let mut last = None;
        while let Some((op, _)) = w.next_op(commits % 2, 0).unwrap() {
            if op == AppOp::Commit {
                assert!(matches!(last, Some(AppOp::SyncWrite { lpn, .. }) if lpn >= 99_900));
                commits += 1;
            } else if let AppOp::Read { lpn, .. } | AppOp::Write { lpn, .. } = op {
                assert!(lpn < 99_900, "table pages stay out of the log");
            }
            last = Some(op);
        }
        assert_eq!(commits, 50);
    }

    #[test]
    fn nurand_is_skewed() {
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let t = Table::new(0, 4096, &mut rng);
        let mut hits = vec![0u32; 4096];
        for _ in 0..200_000 {
            hits[t.nurand(&mut rng) as usize] += 1;
        }
        hits.sort_unstable();
        let top: u32 = hits[4096 - 410..].iter().sum();
        assert!(
            top as f64 > 0.2 * 200_000.0,
            "the top 10% of pages take over 20%"
        );
    }
}
