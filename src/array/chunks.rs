//! Chunk-level access: the grid, which chunks a selection touches, whether a chunk is stored, whole
//! chunks read, written and erased by grid coordinates, and resizing the array.

use super::Array;
use crate::codec::ArrayToBytesCodec;
use crate::error::{Error, Result};
use crate::metadata;
use crate::node;
use crate::selection::{for_each_index, Selection};

impl Array {
    /// Number of chunks along each dimension.
    pub fn grid_shape(&self) -> Vec<u64> {
        self.grid().grid_shape(&self.meta.shape)
    }

    /// Fails unless `chunk` names a chunk of the grid.
    fn check_chunk(&self, chunk: &[u64]) -> Result<()> {
        let grid = self.grid_shape();
        if chunk.len() != grid.len() {
            return Err(Error::InvalidArgument(format!(
                "chunk coordinates have rank {} but the array has rank {}",
                chunk.len(),
                grid.len()
            )));
        }
        if chunk.iter().zip(&grid).any(|(c, g)| c >= g) {
            use crate::index_order::{extents, positions};
            return Err(Error::OutOfBounds(format!(
                "chunk {} is outside the chunk grid {}",
                positions(chunk),
                extents(&grid)
            )));
        }
        Ok(())
    }

    /// The grid coordinates of every chunk holding an element of the selection, in C order.
    pub fn selection_chunks(&self, sel: &Selection) -> Result<Vec<Vec<u64>>> {
        sel.check_within(&self.meta.shape)?;
        Ok(sel.project(self.grid())?.into_iter().map(|p| p.chunk).collect())
    }

    /// The first element and the shape of chunk `chunk` (the stored shape: edge chunks reach past the
    /// array's end).
    pub fn chunk_region(&self, chunk: &[u64]) -> Result<(Vec<u64>, Vec<u64>)> {
        self.check_chunk(chunk)?;
        let spans: Vec<(u64, u64)> = chunk.iter().enumerate().map(|(d, &c)| self.grid().chunk_span(d, c)).collect();
        Ok((spans.iter().map(|s| s.0).collect(), spans.iter().map(|s| s.1).collect()))
    }

    /// Whether chunk `chunk` is stored (a missing chunk reads as the fill value).
    pub fn chunk_is_stored(&self, chunk: &[u64]) -> Result<bool> {
        self.check_chunk(chunk)?;
        self.store.exists(&self.chunk_key(chunk))
    }

    /// Decodes chunk `chunk` whole into `out` (exactly the chunk's decoded size: its full shape, C order,
    /// native-endian); returns whether it was stored.
    pub fn read_whole_chunk(&self, chunk: &[u64], out: &mut [u8]) -> Result<bool> {
        self.check_chunk(chunk)?;
        self.check_chunk_buffer(chunk, out.len())?;
        self.read_chunk(chunk, out)
    }

    /// Encodes `data` (the chunk's full shape, C order, native-endian) and stores it as chunk `chunk`
    /// (a chunk equal to the fill value everywhere is deleted instead, as by region writes).
    pub fn write_whole_chunk(&self, chunk: &[u64], data: &[u8]) -> Result<()> {
        self.check_writable()?;
        self.check_chunk(chunk)?;
        self.check_chunk_buffer(chunk, data.len())?;
        let key = self.chunk_key(chunk);
        let chain = self.meta.chain_for(chunk)?;
        let repr = chain.decoded_repr();
        let lock = self.lock_chunks([chunk])?;
        let mut sink = |encoded: Option<crate::codec::Parts>| self.store_chunk(&key, encoded, &lock);
        let result = if self.meta.fill_defined {
            chain.encode_box(data, &repr.layout(), 0, repr, &mut sink)
        } else {
            chain.encode_chunk(data).and_then(|e| sink(Some(vec![e])))
        };
        result.map_err(|e| e.context(self.store.location(&key)))
    }

    /// Deletes chunk `chunk` (it then reads as the fill value); erasing a missing chunk is no error.
    pub fn erase_chunk(&self, chunk: &[u64]) -> Result<()> {
        self.check_writable()?;
        self.check_chunk(chunk)?;
        let lock = self.lock_chunks([chunk])?;
        self.store.delete_locked(&self.chunk_key(chunk), &lock)
    }

    fn check_chunk_buffer(&self, chunk: &[u64], len: usize) -> Result<()> {
        let n = self.meta.chain_for(chunk)?.decoded_repr().nbytes();
        if len != n {
            return Err(Error::BufferSize(format!("buffer has {len} bytes, a whole chunk has {n}")));
        }
        Ok(())
    }

    /// Changes the array's shape (same rank). Chunks wholly outside the new shape are deleted first;
    /// then the metadata document is rewritten atomically. Chunks straddling the new edge are left as
    /// they are (as zarr-python does): growing the array again shows their old values there.
    ///
    /// The call holds the array's metadata lock exclusively (so no chunk writer runs meanwhile) and
    /// starts from the metadata document as stored, not as this handle cached it: a concurrent
    /// attribute update or resize by another process or handle is kept (only the shape changes), and
    /// the handle afterwards holds the stored attributes.
    pub fn resize(&mut self, shape: &[u64]) -> Result<()> {
        self.check_writable()?;
        let lock = self.lock_metadata()?;
        let stored = match node::open_node(self.store.as_ref(), &self.path, Some(node::Want::Array), Some(self.meta.zarr_format))?.0 {
            Some(node::NodeMetadata::Array(m)) => m,
            _ => return Err(Error::NotFound(format!("no array at {} any more", node::describe(self.store.as_ref(), &self.path)))),
        };
        let old = stored.shape.clone();
        if shape.len() != old.len() {
            return Err(Error::InvalidArgument(format!(
                "new shape has rank {} but the array has rank {}",
                shape.len(),
                old.len()
            )));
        }
        crate::metadata::check_shape_size(shape).map_err(|e| Error::InvalidArgument(e.message().to_string()))?;
        // The new metadata first: a rectilinear grid grows an edge, which the codecs must accept
        // (sharding needs edges its inner chunks divide) before anything is deleted.
        let mut meta = stored.clone();
        meta.document["shape"] = serde_json::Value::from(shape.to_vec());
        meta.shape = shape.to_vec();
        if meta.grid.regular_shape().is_none() {
            meta.grid = meta.grid.resized(shape)?;
            meta.document["chunk_grid"] = meta.grid.to_json();
            meta.other_chains = Default::default();
            meta.check_chunk_shapes().map_err(|e| {
                Error::InvalidArgument(format!("shape {shape:?} would add a chunk edge the codecs refuse: {}", e.message()))
            })?;
        }
        let old_grid = stored.grid.grid_shape(&old);
        let new_grid = stored.grid.grid_shape(shape);
        let prefix = &self.prefix;
        let key_of = |i: &[u64]| format!("{prefix}{}", stored.chunk_key_encoding.key(i));
        // Many chunks outside the new grid (a grid of 2^62 chunks shrunk): the stored chunks are
        // listed and those outside deleted, in time and memory proportional to what is stored, not
        // to the grid. Stores that cannot list (none writable) enumerate the keys instead.
        if outside_count(&old_grid, &new_grid) > ENUMERATE_AT_MOST {
            let listed = stored_chunks(self.store.as_ref(), prefix, &stored.chunk_key_encoding, old.len());
            if let Some(listed) = listed.transpose() {
                let keys: Vec<String> = listed?
                    .into_iter()
                    .filter(|i| i.iter().zip(&new_grid).any(|(c, n)| c >= n))
                    .map(|i| key_of(&i))
                    .collect();
                crate::threads::try_for_each(&keys, |k| self.store.delete_locked(k, &lock))?;
                return self.finish_resize(meta, &stored, &lock);
            }
        }
        // The chunks outside the new grid, as disjoint boxes: along d beyond the new grid, before d
        // inside it, after d anywhere in the old grid.
        for d in 0..old.len() {
            if new_grid[d] >= old_grid[d] {
                continue;
            }
            let ranges: Vec<(u64, u64)> = (0..old.len())
                .map(|e| match e.cmp(&d) {
                    std::cmp::Ordering::Less => (0, new_grid[e].min(old_grid[e])),
                    std::cmp::Ordering::Equal => (new_grid[d], old_grid[d]),
                    std::cmp::Ordering::Greater => (0, old_grid[e]),
                })
                .collect();
            if ranges.iter().any(|(lo, hi)| lo >= hi) {
                continue;
            }
            let inclusive: Vec<(u64, u64)> = ranges.iter().map(|&(lo, hi)| (lo, hi - 1)).collect();
            let mut keys = Vec::new();
            for_each_index(&inclusive, |i| keys.push(key_of(i)));
            // The exclusive metadata lock excludes every chunk writer.
            crate::threads::try_for_each(&keys, |k| self.store.delete_locked(k, &lock))?;
        }
        self.finish_resize(meta, &stored, &lock)
    }

    /// The last step of [`Array::resize`], once the chunks outside the new shape are gone: the new
    /// metadata document (`meta`, from the `stored` one) written under the metadata lock `lock`.
    fn finish_resize(&mut self, meta: metadata::ArrayMetadata, stored: &metadata::ArrayMetadata, lock: &crate::store::StoreLock) -> Result<()> {
        // v3 keeps the attributes in zarr.json; v2 keeps them apart.
        let doc = if meta.zarr_format == 3 { meta.document_with_attributes(&stored.attributes) } else { meta.document.clone() };
        let key = node::metadata_key(&self.path, meta.zarr_format, node::NodeKind::Array);
        self.store.set_parts_locked(&key, &[&metadata::to_bytes(&doc)], lock)?;
        *self.attributes.get_mut().unwrap_or_else(|e| e.into_inner()) = stored.attributes.clone();
        self.meta = meta;
        Ok(())
    }
}

/// Above this many chunks outside the new shape, [`Array::resize`] lists the stored chunks instead of
/// enumerating the keys of the chunks that may be stored.
const ENUMERATE_AT_MOST: u64 = 1 << 16;

/// How many chunks of `old_grid` lie outside `new_grid` (saturating).
fn outside_count(old_grid: &[u64], new_grid: &[u64]) -> u64 {
    let total = old_grid.iter().fold(1u64, |a, &n| a.saturating_mul(n));
    let inside = old_grid.iter().zip(new_grid).fold(1u64, |a, (&o, &n)| a.saturating_mul(o.min(n)));
    total.saturating_sub(inside)
}

/// The grid indices of the chunks stored below `prefix` (an array's key prefix) under `encoding` for
/// rank `rank`, found by listing: each directory of the chunk key tree once, so the work follows
/// what is stored. `Ok(None)`: the store cannot list.
fn stored_chunks(
    store: &dyn crate::store::Store,
    prefix: &str,
    encoding: &crate::chunk_key::ChunkKeyEncoding,
    rank: usize,
) -> Result<Option<Vec<Vec<u64>>>> {
    let mut out = Vec::new();
    // (prefix below the array, depth): chunk keys nest at most rank + 1 deep (`c/i/j/k`).
    let mut dirs = vec![(String::new(), 0usize)];
    while let Some((rel, depth)) = dirs.pop() {
        let listing = match store.list_dir(&format!("{prefix}{rel}")) {
            Ok(l) => l,
            Err(Error::Unsupported(_)) if rel.is_empty() => return Ok(None),
            Err(e) => return Err(e),
        };
        out.extend(listing.keys.iter().filter_map(|k| encoding.parse(&format!("{rel}{k}"), rank)));
        if depth < rank + 1 {
            for d in listing.prefixes {
                if d == "c" || d.bytes().all(|b| b.is_ascii_digit()) {
                    dirs.push((format!("{rel}{d}/"), depth + 1));
                }
            }
        }
    }
    Ok(Some(out))
}
