//! Icechunk's errors as libzarr's: the crate's nested error kinds (store > session > repository >
//! reference / format / storage) sorted into the status a C caller sees ([`Class`]), with the
//! crate's one-line message (without its span trace) after what libzarr was doing.

use crate::error::Error;
use icechunk::session::SessionErrorKind;
use icechunk::store::StoreErrorKind;

/// The one-line text of an icechunk error: its kind and the kinds' sources (the crate's `Display`
/// adds a span trace instead).
fn text<E: std::error::Error>(e: &icechunk::error::ICError<E>) -> String {
    let mut out = e.kind.to_string();
    let mut source = std::error::Error::source(&e.kind);
    while let Some(s) = source {
        let t = s.to_string();
        if !out.contains(&t) {
            out = format!("{out}: {t}");
        }
        source = s.source();
    }
    out
}

/// The libzarr error of class `kind` with message `msg`, after `what` (the operation).
pub(crate) fn classify(kind: Class, what: &str, msg: String) -> Error {
    let m = format!("{what}: {msg}");
    match kind {
        Class::NotFound => Error::NotFound(m),
        Class::Exists => Error::Exists(m),
        Class::ReadOnly => Error::ReadOnly(m),
        Class::Conflict => Error::Conflict(m),
        Class::Corrupt => Error::Codec(m),
        Class::Invalid => Error::InvalidArgument(m),
        Class::Unsupported => Error::Unsupported(m),
        Class::Io => Error::Io(m),
    }
}

/// What kind of failure an icechunk error is, as a libzarr status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    NotFound,
    Exists,
    ReadOnly,
    Conflict,
    Corrupt,
    Invalid,
    Unsupported,
    Io,
}

pub(crate) fn class_storage(k: &icechunk::storage::StorageErrorKind) -> Class {
    use icechunk::storage::StorageErrorKind as K;
    match k {
        K::ObjectNotFound => Class::NotFound,
        // S3's answer for a bucket that does not exist (object_store reports it as a generic error
        // when listing, as when creating a repository).
        K::ObjectStore(e) if says(e.as_ref(), "<Code>NoSuchBucket</Code>") => Class::NotFound,
        _ => Class::Io,
    }
}

/// Whether `e` or one of its sources says `what`.
fn says(e: &(dyn std::error::Error + 'static), what: &str) -> bool {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if c.to_string().contains(what) {
            return true;
        }
        cur = c.source();
    }
    false
}

pub(crate) fn class_format(k: &icechunk::format::IcechunkFormatErrorKind) -> Class {
    use icechunk::format::IcechunkFormatErrorKind as K;
    match k {
        K::NodeNotFound { .. }
        | K::ChunkCoordinatesNotFound { .. }
        | K::SnapshotIdNotFound { .. }
        | K::BranchNotFound { .. }
        | K::TagNotFound { .. }
        | K::ManifestInfoNotFound { .. } => Class::NotFound,
        K::BranchAlreadyExists { .. } | K::TagAlreadyExists { .. } | K::TagPreviouslyDeleted { .. } => Class::Exists,
        _ => Class::Corrupt,
    }
}

pub(crate) fn class_ref(k: &icechunk::refs::RefErrorKind) -> Class {
    use icechunk::refs::RefErrorKind as K;
    match k {
        K::Storage(s) => class_storage(s),
        K::RefNotFound(_) => Class::NotFound,
        K::InvalidRefType(_) | K::InvalidRefName(_) => Class::Invalid,
        K::TagAlreadyExists(_) => Class::Exists,
        K::Conflict { .. } => Class::Conflict,
        K::Serialization(_) => Class::Corrupt,
        _ => Class::Io,
    }
}

pub(crate) fn class_repo(k: &icechunk::repository::RepositoryErrorKind) -> Class {
    use icechunk::repository::RepositoryErrorKind as K;
    match k {
        K::StorageError(s) => class_storage(s),
        K::FormatError(f) => class_format(f),
        K::Ref(r) => class_ref(r),
        K::SnapshotNotFound { .. } | K::RepositoryDoesntExist => Class::NotFound,
        K::InvalidSnapshotId(_) | K::InvalidAsOfSpec { .. } => Class::Invalid,
        K::Tag(_) => Class::Exists,
        // Creating a repository where there are objects already (an S3 prefix that is not empty).
        K::ParentDirectoryNotClean => Class::Exists,
        K::Conflict { .. } | K::RepoInfoUpdated | K::ConfigWasUpdated | K::RepoUpdateAttemptsLimit(_) => Class::Conflict,
        K::ReadonlyStorage(_) | K::ReadonlyRepository(_) => Class::ReadOnly,
        K::DeserializationError(_) | K::ConfigDeserializationError(_) => Class::Corrupt,
        // Reading goes through the storage (StorageError); an I/O error of the repository's own is a
        // file that does not decode (a truncated zstd frame, a short header), unless the OS raised it.
        K::IOError(e) if e.raw_os_error().is_none() => Class::Corrupt,
        K::BadRepoVersion { .. } => Class::Unsupported,
        _ => Class::Io,
    }
}

pub(crate) fn class_session(k: &SessionErrorKind) -> Class {
    use SessionErrorKind as K;
    match k {
        K::RepositoryError(r) => class_repo(r),
        K::StorageError(s) => class_storage(s),
        K::FormatError(f) => class_format(f),
        K::RefError(r) => class_ref(r),
        K::ReadOnlySession | K::CommitNotAllowed => Class::ReadOnly,
        K::SnapshotNotFound { .. } | K::NodeNotFound { .. } | K::AncestorNodeNotFound { .. } => Class::NotFound,
        K::AlreadyExists { .. } => Class::Exists,
        K::Conflict { .. } | K::RebaseFailed { .. } => Class::Conflict,
        K::NoChangesToCommit | K::InvalidIndex { .. } | K::NotAnArray { .. } | K::NotAGroup { .. } => Class::Invalid,
        K::DeserializationError(_) | K::ZeroLengthChunk { .. } => Class::Corrupt,
        _ => Class::Io,
    }
}

pub(crate) fn class_store(k: &StoreErrorKind) -> Class {
    use StoreErrorKind as K;
    match k {
        K::SessionError(s) => class_session(s),
        K::RepositoryError(r) => class_repo(r),
        K::RefError(r) => class_ref(r),
        K::NotFound(_) => Class::NotFound,
        K::ReadOnly => Class::ReadOnly,
        K::InvalidKey { .. } | K::InvalidIndex { .. } | K::BadKeyPrefix { .. } | K::NotAllowed(_) => Class::Invalid,
        K::BadMetadata(_) | K::BadChunkGridMetadata(_) | K::InvalidVirtualChunkContainer { .. } => Class::Invalid,
        K::Unimplemented(_) => Class::Unsupported,
        K::DeserializationError(_) => Class::Corrupt,
        _ => Class::Io,
    }
}

pub(crate) fn repo_err(what: &str, e: icechunk::repository::RepositoryError) -> Error {
    classify(class_repo(&e.kind), what, text(&e))
}

pub(crate) fn session_err(what: &str, e: icechunk::session::SessionError) -> Error {
    classify(class_session(&e.kind), what, text(&e))
}

pub(crate) fn store_err(what: &str, e: icechunk::store::StoreError) -> Error {
    classify(class_store(&e.kind), what, text(&e))
}
