//! A value written in pieces: [`Store::stream_locked`](super::Store::stream_locked) hands a writer
//! holding a key's lock a [`ValueStream`], which takes the value's bytes in order as they are made (a
//! shard's inner chunks as each is encoded, then its index) instead of all at once. Nothing shows at
//! the key until [`ValueStream::commit`]: readers see the old value or the whole new one, as with
//! [`Store::set_parts_locked`](super::Store::set_parts_locked), and a stream dropped uncommitted (a
//! failed encode) leaves the key as it was and nothing behind. The filesystem store streams into its
//! temporary file ([`super::filesystem`]); stores that cannot stream return `None` and take the value
//! whole.

use crate::error::Result;

/// The bytes of one value on their way to the store; see the module documentation.
pub trait ValueStream: Send {
    /// Appends the concatenation of `parts` to the value.
    fn write(&mut self, parts: &[&[u8]]) -> Result<()>;

    /// Stores the value written so far at its key, replacing the old value in one step.
    fn commit(self: Box<Self>) -> Result<()>;
}
