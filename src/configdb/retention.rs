//! Retention: how many old versions of each document an environment
//! keeps, and for how long. The store prunes what falls outside it.
//!
//! Rules the store keeps whatever the retention says: the latest version
//! of a document is never pruned (nor a deletion marker that is the
//! latest); under a deletion marker, the newest version with content is
//! kept too, so a deleted document can always be restored; and only the
//! oldest versions go (a kept version never depends on a pruned one).

use std::fmt;

/// A retention policy. Each limit is `None` (not set: the server's
/// default applies) or a number, where 0 means "no limit".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Retention {
    /// Keep at most this many versions of each document (latest included).
    pub(crate) keep_versions: Option<u64>,
    /// Keep versions written less than this many days ago.
    pub(crate) keep_days: Option<u64>,
}

/// Seconds in a retention day.
pub(crate) const DAY: i64 = 24 * 60 * 60;

impl Retention {
    /// No limit at all: every version is kept.
    pub(crate) const KEEP_ALL: Retention = Retention {
        keep_versions: Some(0),
        keep_days: Some(0),
    };

    /// This policy with each unset limit taken from `default`.
    pub(crate) fn over(self, default: Retention) -> Retention {
        Retention {
            keep_versions: self.keep_versions.or(default.keep_versions),
            keep_days: self.keep_days.or(default.keep_days),
        }
    }

    /// The versions limit in force (`None`: no limit).
    pub(crate) fn versions_limit(&self) -> Option<u64> {
        self.keep_versions.filter(|&n| n > 0)
    }

    /// The oldest `created_at` kept at time `now` (`None`: no limit).
    pub(crate) fn cutoff(&self, now: i64) -> Option<i64> {
        let days = i64::try_from(self.keep_days.filter(|&d| d > 0)?).ok()?;
        Some(now.saturating_sub(days.saturating_mul(DAY)))
    }

    /// The number of the oldest version of a document to keep, given its
    /// versions `(number, created_at, deleted)` oldest first; every older
    /// one may be pruned. `None` for no versions.
    ///
    /// A version is kept if it is the latest, or the newest with content
    /// under a deletion marker, or within both limits; the oldest kept
    /// one decides, so what stays is always an unbroken run up to the
    /// latest.
    pub(crate) fn oldest_kept(&self, versions: &[(u64, i64, bool)], now: i64) -> Option<u64> {
        let &(latest, _, latest_deleted) = versions.last()?;
        let cutoff = self.cutoff(now);
        let limit = self.versions_limit();
        let newest_content = versions
            .iter()
            .rev()
            .find(|(_, _, deleted)| !deleted)
            .map(|(n, _, _)| *n);
        versions
            .iter()
            .find(|&&(n, created_at, _)| {
                n == latest
                    || (latest_deleted && Some(n) == newest_content)
                    || (limit.is_none_or(|keep| n + keep > latest)
                        && cutoff.is_none_or(|c| created_at >= c))
            })
            .map(|(n, _, _)| *n)
    }

    /// The oldest version of a document that a read at the pinned
    /// generation `tag` needs, which pruning must keep with every later
    /// one: the newest written at or before it; for a document written
    /// only after it, the first (a read infers that a document whose
    /// oldest kept version is not its first had an older one live before
    /// that version's generation, so only the first shows it was absent).
    /// `versions` are each version's number and the generation that wrote
    /// it (`None`: before generations were recorded, so before any tag),
    /// oldest first.
    pub(crate) fn pinned(versions: &[(u64, Option<u64>)], tag: u64) -> Option<u64> {
        versions
            .iter()
            .rev()
            .find(|(_, generation)| generation.is_none_or(|g| g <= tag))
            .or(versions.first())
            .map(|(n, _)| *n)
    }

    /// Whether this policy prunes anything at all.
    pub(crate) fn prunes(&self) -> bool {
        self.versions_limit().is_some() || self.keep_days.is_some_and(|d| d > 0)
    }
}

impl fmt::Display for Retention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limit = |n: Option<u64>, unit: &str| match n {
            None => "the default".to_owned(),
            Some(0) => "no limit".to_owned(),
            Some(n) => format!("{n} {unit}"),
        };
        write!(
            f,
            "versions: {}, age: {}",
            limit(self.keep_versions, "versions"),
            limit(self.keep_days, "days")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_and_defaults() {
        let default = Retention {
            keep_versions: Some(50),
            keep_days: Some(0),
        };
        let env = Retention {
            keep_versions: None,
            keep_days: Some(30),
        };
        let r = env.over(default);
        assert_eq!(r.versions_limit(), Some(50));
        assert_eq!(r.cutoff(100 * DAY), Some(70 * DAY));
        assert!(r.prunes());
        assert!(!Retention::KEEP_ALL.prunes());
        assert!(!Retention::default().prunes());
        assert_eq!(Retention::KEEP_ALL.cutoff(5), None);
        // (number, created_at in days, deleted)
        let versions = |list: &[(u64, i64, bool)]| -> Vec<(u64, i64, bool)> {
            list.iter().map(|&(n, d, x)| (n, d * DAY, x)).collect()
        };
        let keep = |v: Option<u64>, d: Option<u64>| Retention {
            keep_versions: v,
            keep_days: d,
        };
        let history = versions(&[(3, 1, false), (4, 2, false), (5, 8, false), (6, 9, false)]);
        type Case = (Retention, Vec<(u64, i64, bool)>, Option<u64>);
        let cases: Vec<Case> = vec![
            (keep(Some(2), None), history.clone(), Some(5)),
            (keep(Some(10), None), history.clone(), Some(3)),
            (keep(Some(1), None), history.clone(), Some(6)),
            // Newer than day 10 - 3 = 7: versions 5 and 6.
            (keep(None, Some(3)), history.clone(), Some(5)),
            // Both limits: a version must fit both to stay.
            (keep(Some(3), Some(3)), history.clone(), Some(5)),
            (keep(Some(1), Some(30)), history.clone(), Some(6)),
            (Retention::KEEP_ALL, history.clone(), Some(3)),
            // The latest stays however old.
            (keep(None, Some(1)), history.clone(), Some(6)),
            // A deletion marker on top keeps the content under it.
            (
                keep(Some(1), None),
                versions(&[(1, 1, false), (2, 1, false), (3, 1, true)]),
                Some(2),
            ),
            (
                keep(Some(1), None),
                versions(&[(1, 1, false), (2, 1, true), (3, 1, true)]),
                Some(1),
            ),
            (
                keep(Some(1), None),
                versions(&[(1, 1, true), (2, 1, true)]),
                Some(2),
            ),
            (keep(Some(1), None), vec![], None),
        ];
        for (retention, list, want) in cases {
            assert_eq!(
                retention.oldest_kept(&list, 10 * DAY),
                want,
                "{retention} {list:?}"
            );
        }
        assert_eq!(
            Retention {
                keep_versions: Some(0),
                keep_days: None
            }
            .to_string(),
            "versions: no limit, age: the default"
        );
    }
}
