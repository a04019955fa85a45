//! Stores whose writes go into a transaction that is committed or discarded as a whole (an Icechunk
//! session, [`super::icechunk`]). A handle's store offers it through [`super::Store::transaction`];
//! the C calls `zarr_icechunk_commit` and `zarr_icechunk_discard` act on it.

use crate::error::Result;

/// How a commit treats another writer's commit that landed on the branch since the session began.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// Fail with [`crate::Error::Conflict`]; the session keeps its changes.
    Fail,
    /// Rebase the changes onto the branch's new tip when they touch nothing the other commits
    /// changed (other chunks, other nodes), then commit; otherwise [`crate::Error::Conflict`].
    Rebase,
}

/// A transaction of writes.
pub trait Transaction: Send + Sync {
    /// Commits the changes made so far with `message` and returns the new snapshot's id; the
    /// transaction then continues from that snapshot (later writes go into the next commit).
    fn commit(&self, message: &str, on_conflict: OnConflict) -> Result<String>;

    /// Drops the changes made so far; the transaction continues from the branch's current tip.
    fn discard(&self) -> Result<()>;

    /// Whether there are changes not yet committed.
    fn has_changes(&self) -> Result<bool>;

    /// The id of the snapshot reads see (the base of the changes).
    fn snapshot_id(&self) -> Result<String>;

    /// The transaction as its concrete type (an Icechunk session's fork and merge,
    /// [`super::icechunk_fork`]), where it offers one.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}
