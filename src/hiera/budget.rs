//! The budget of one lookup: how many `%{}` expansions it may evaluate and
//! how many bytes of values interpolation may build, passed in by the
//! caller and metered as the lookup goes. Exceeding it refuses the lookup;
//! within it, answers are Hiera 3.10's unchanged. No I/O, no clock.

use super::error::{ErrorClass, HieraError, Result};
use super::value::Value;

/// What one lookup may spend. Ten `%{hiera('e4')}` in `e5`, ten
/// `%{hiera('e3')}` in `e4` … build answers exponentially larger than the
/// data: a budget turns that into a refusal instead of a stalled server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    /// `%{…}` tokens evaluated (each `hiera()`/`alias()` nested lookup is
    /// one, and so is each token its answer re-interpolates).
    pub(crate) steps: u64,
    /// Bytes of Strings interpolation builds, and of the values `alias()`
    /// hands out, summed over the lookup and the lookups nested in it.
    pub(crate) bytes: u64,
}

impl Budget {
    /// The defaults of `hierad serve` and `hierad lookup`: far above what
    /// real data needs (Fuel's deployment data has no token at all; a
    /// lookup rarely evaluates more than a few dozen), far below a stall.
    pub(crate) const DEFAULT: Budget = Budget {
        steps: 10_000,
        bytes: 32 * 1024 * 1024,
    };

    /// No limit (what Hiera itself does).
    pub(crate) const UNLIMITED: Budget = Budget {
        steps: u64::MAX,
        bytes: u64::MAX,
    };

    /// The smaller of each limit.
    pub(crate) fn min(self, other: Budget) -> Budget {
        Budget {
            steps: self.steps.min(other.steps),
            bytes: self.bytes.min(other.bytes),
        }
    }

    /// Whether `self` allows no more than `other` in both limits.
    pub(crate) fn within(self, other: Budget) -> bool {
        self.steps <= other.steps && self.bytes <= other.bytes
    }
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::DEFAULT
    }
}

/// Which limit of a [`Budget`] a lookup ran out of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    Steps,
    Bytes,
}

impl Limit {
    /// How the API and the metrics name this limit.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Limit::Steps => "steps",
            Limit::Bytes => "bytes",
        }
    }

    /// The error class a refusal carries.
    pub(crate) fn class(self) -> ErrorClass {
        match self {
            Limit::Steps => ErrorClass::StepBudgetExceeded,
            Limit::Bytes => ErrorClass::ByteBudgetExceeded,
        }
    }

    /// Which limit an error is the refusal of, if it is one.
    pub(crate) fn of(error: &HieraError) -> Option<Limit> {
        match error.class {
            ErrorClass::StepBudgetExceeded => Some(Limit::Steps),
            ErrorClass::ByteBudgetExceeded => Some(Limit::Bytes),
            _ => None,
        }
    }

    /// This limit's value in `budget`.
    pub(crate) fn of_budget(self, budget: Budget) -> u64 {
        match self {
            Limit::Steps => budget.steps,
            Limit::Bytes => budget.bytes,
        }
    }
}

/// A [`Budget`] and what has been spent of it. Shared by every lookup
/// nested in one (and, for a request of several keys, by all of them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Meter {
    budget: Budget,
    steps: u64,
    bytes: u64,
}

impl Meter {
    pub(crate) fn new(budget: Budget) -> Meter {
        Meter {
            budget,
            steps: 0,
            bytes: 0,
        }
    }

    /// One `%{…}` token about to be evaluated.
    ///
    /// # Errors
    ///
    /// The step budget is spent.
    pub(crate) fn step(&mut self) -> Result<()> {
        self.steps = self.steps.saturating_add(1);
        if self.steps > self.budget.steps {
            return Err(exceeded(Limit::Steps, self.budget.steps));
        }
        Ok(())
    }

    /// `bytes` of a value about to be built (charged before it is, so
    /// memory stays near the budget).
    ///
    /// # Errors
    ///
    /// The byte budget is spent.
    pub(crate) fn bytes(&mut self, bytes: usize) -> Result<()> {
        let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
        self.bytes = self.bytes.saturating_add(bytes);
        if self.bytes > self.budget.bytes {
            return Err(exceeded(Limit::Bytes, self.budget.bytes));
        }
        Ok(())
    }

    /// `steps` tokens and `bytes` bytes at once, if the budget has room
    /// for both (then the meter ends where charging them one by one, in any
    /// order, would leave it); false, charging nothing, if it has not.
    pub(crate) fn try_spend(&mut self, steps: u64, bytes: usize) -> bool {
        let bytes = u64::try_from(bytes).unwrap_or(u64::MAX);
        let (steps, bytes) = (
            self.steps.saturating_add(steps),
            self.bytes.saturating_add(bytes),
        );
        if steps > self.budget.steps || bytes > self.budget.bytes {
            return false;
        }
        (self.steps, self.bytes) = (steps, bytes);
        true
    }

    /// The bytes `value` takes, charged; the walk stops once over budget
    /// (a large value is not walked to its end to be refused).
    ///
    /// # Errors
    ///
    /// The byte budget is spent.
    pub(crate) fn value(&mut self, value: &Value) -> Result<()> {
        let left = self.budget.bytes.saturating_sub(self.bytes);
        let size = value_bytes(value, left);
        self.bytes(usize::try_from(size).unwrap_or(usize::MAX))
    }
}

fn exceeded(limit: Limit, value: u64) -> HieraError {
    let message = match limit {
        Limit::Steps => format!(
            "Lookup budget exceeded: more than {value} interpolation steps (%{{}} expansions, hiera() and alias() lookups)"
        ),
        Limit::Bytes => format!(
            "Lookup budget exceeded: interpolation would build more than {value} bytes of values"
        ),
    };
    HieraError::new(limit.class(), message)
}

/// What one Value costs in memory besides its contents.
const NODE: u64 = std::mem::size_of::<Value>() as u64;

/// The bytes `value` takes (its nodes and its text), or some number over
/// `cap` once it is known to be over.
fn value_bytes(value: &Value, cap: u64) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(NODE);
        match v {
            Value::String(s) | Value::Symbol(s) => {
                total = total.saturating_add(s.len() as u64);
            }
            Value::Array(items) => stack.extend(items),
            Value::Hash(h) => {
                for (k, v) in h {
                    stack.push(k);
                    stack.push(v);
                }
            }
            Value::Nil | Value::Bool(_) | Value::Int(_) | Value::BigInt(_) | Value::Float(_) => {}
        }
        if total > cap {
            break;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rhash;

    #[test]
    fn a_meter_refuses_past_its_budget_and_names_it() {
        let mut meter = Meter::new(Budget {
            steps: 2,
            bytes: 10,
        });
        meter.step().unwrap();
        meter.step().unwrap();
        let err = meter.step().unwrap_err();
        assert_eq!(Limit::of(&err), Some(Limit::Steps));
        assert!(
            err.message.contains("more than 2 interpolation steps"),
            "{err}"
        );
        meter.bytes(10).unwrap();
        let err = meter.bytes(1).unwrap_err();
        assert_eq!(Limit::of(&err), Some(Limit::Bytes));
        assert!(err.message.contains("more than 10 bytes"), "{err}");
    }

    #[test]
    fn value_sizes_count_nodes_and_text_and_stop_early() {
        let v = Value::Array(vec![Value::str("abcd"), Value::Nil]);
        assert_eq!(value_bytes(&v, u64::MAX), 3 * NODE + 4);
        let h = Value::Hash(rhash! {"k" => "vv"});
        assert_eq!(value_bytes(&h, u64::MAX), 3 * NODE + 3);
        let big = Value::Array(vec![Value::Nil; 1000]);
        assert!(value_bytes(&big, 10) <= 10 + 2 * NODE);
        assert_eq!(Limit::of(&HieraError::new(ErrorClass::Exception, "")), None);
    }
}
