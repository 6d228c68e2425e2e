//! One budget of bytes for every connection of a proxy together, so that
//! many clients each parking a partial frame cannot add up past it.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes that all the connections sharing it may hold at once: partial
/// frames, answers parked behind earlier ones, output not yet written (see
/// [`Connection::held_bytes`](super::Connection::held_bytes)).
///
/// Each connection charges what it holds after every read; the one whose
/// charge would take the total past the limit fails, and what it held is
/// given back.
#[derive(Debug)]
pub struct BufferBudget {
    limit: usize,
    used: AtomicUsize,
}

impl BufferBudget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Self {
        BufferBudget {
            limit,
            used: AtomicUsize::new(0),
        }
    }

    /// The limit, in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The bytes charged now, over every connection.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Moves one connection's charge from `from` to `to` bytes. Growing
    /// past the limit fails, leaving the charge at `from`.
    pub fn recharge(&self, from: usize, to: usize) -> Result<(), BudgetExceeded> {
        if to <= from {
            self.used.fetch_sub(from - to, Ordering::Relaxed);
            return Ok(());
        }
        let grow = to - from;
        let before = self.used.fetch_add(grow, Ordering::Relaxed);
        if before.saturating_add(grow) > self.limit {
            self.used.fetch_sub(grow, Ordering::Relaxed);
            return Err(BudgetExceeded { limit: self.limit });
        }
        Ok(())
    }
}

/// A connection would have taken the shared buffer budget past its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the proxy's buffer budget of {limit} bytes, over all connections, is spent")]
pub struct BudgetExceeded {
    /// The budget's limit, in bytes.
    pub limit: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_grow_shrink_and_stop_at_the_limit() {
        let budget = BufferBudget::new(100);
        assert!(budget.recharge(0, 60).is_ok());
        assert!(budget.recharge(0, 30).is_ok());
        assert_eq!(budget.used(), 90);
        // A third connection would pass the limit: refused, nothing kept.
        assert_eq!(budget.recharge(0, 20), Err(BudgetExceeded { limit: 100 }));
        assert_eq!(budget.used(), 90);
        // The first gives back what it held; now it fits.
        assert!(budget.recharge(60, 0).is_ok());
        assert!(budget.recharge(0, 20).is_ok());
        assert_eq!(budget.used(), 50);
    }
}
