//! Buffers of `f64` for large arrays that are streamed again and again (the columns of a
//! dense design), placed on transparent huge pages where the system offers them.
//!
//! A coordinate pass streams the whole design once per pass, a column at a time. With
//! the default 4 KiB pages an 80 MB design spans about 20,000 pages: each is a TLB miss
//! (a two-level, nested page walk in a virtual machine) and the hardware prefetcher,
//! which does not cross a page boundary, restarts at each one. Linux backs memory with
//! 2 MiB pages only where the program asks (`madvise(MADV_HUGEPAGE)`) unless the
//! administrator turned them on for everything (`/sys/kernel/mm/transparent_hugepage/
//! enabled` is `madvise` by default on most distributions). numpy asks for every array
//! of 4 MiB or more; so does [`F64Buf`]. Measured on the 1e5 x 100 column sweep of
//! `examples/col_read.rs`: see `docs/performance.md`, "Huge pages".
//!
//! How: an anonymous memory map 2 MiB longer than needed (safe `memmap2::MmapMut`), the
//! advice given before any page is touched (so the first writes fault in huge pages),
//! the values placed from the first 2 MiB boundary on, and the bytes seen as `f64`s
//! through `bytemuck`'s checked cast. Everything here is safe Rust. Off Linux, for
//! short arrays, or when the map or the advice fails (no memory map, no transparent huge
//! pages in the kernel), the buffer is an ordinary `Vec<f64>`: the advice is a hint,
//! never a requirement, and no value depends on where the buffer lives.

/// Arrays at least this long (in `f64`s, 4 MiB, numpy's threshold) are placed on huge
/// pages; shorter ones live in a `Vec`.
pub const HUGE_PAGE_MIN_LEN: usize = 512 * 1024;

/// The size of a transparent huge page on x86-64 Linux (2 MiB).
const HUGE_PAGE_BYTES: usize = 2 * 1024 * 1024;

/// A fixed-length buffer of `f64`s, on huge pages when it is long (see the module
/// documentation). Dereferences to `[f64]`.
pub struct F64Buf {
    store: Store,
}

enum Store {
    Heap(Vec<f64>),
    #[cfg(target_os = "linux")]
    Map {
        map: memmap2::MmapMut,
        /// Byte offset of the first value (the first 2 MiB boundary of the map).
        offset: usize,
        len: usize,
    },
}

impl F64Buf {
    /// A copy of `values`.
    pub fn from_slice(values: &[f64]) -> Self {
        Self::from_fn(values.len(), |out| out.copy_from_slice(values))
    }

    /// Takes `values` (kept as it is when it is short, copied onto huge pages when long).
    pub fn from_vec(values: Vec<f64>) -> Self {
        if values.len() < HUGE_PAGE_MIN_LEN {
            return Self {
                store: Store::Heap(values),
            };
        }
        Self::from_slice(&values)
    }

    /// A buffer of `len` values filled by `fill`, which receives a zeroed slice of
    /// length `len`.
    pub fn from_fn(len: usize, fill: impl FnOnce(&mut [f64])) -> Self {
        let mut buf = Self::zeroed(len);
        fill(buf.as_mut_slice());
        buf
    }

    /// `len` zeros.
    pub fn zeroed(len: usize) -> Self {
        #[cfg(target_os = "linux")]
        if len >= HUGE_PAGE_MIN_LEN {
            if let Some(store) = huge_map(len) {
                return Self { store };
            }
        }
        Self {
            store: Store::Heap(vec![0.0; len]),
        }
    }

    /// Whether the buffer was placed in a memory map advised for huge pages (whether
    /// the kernel granted them is its own business: see `AnonHugePages` in
    /// `/proc/self/smaps`).
    pub fn is_huge_page_advised(&self) -> bool {
        match self.store {
            Store::Heap(_) => false,
            #[cfg(target_os = "linux")]
            Store::Map { .. } => true,
        }
    }

    /// The values.
    #[inline]
    pub fn as_slice(&self) -> &[f64] {
        match &self.store {
            Store::Heap(v) => v,
            #[cfg(target_os = "linux")]
            Store::Map { map, offset, len } => {
                bytemuck::cast_slice(&map[*offset..*offset + len * std::mem::size_of::<f64>()])
            }
        }
    }

    /// The values, mutably.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [f64] {
        match &mut self.store {
            Store::Heap(v) => v,
            #[cfg(target_os = "linux")]
            Store::Map { map, offset, len } => bytemuck::cast_slice_mut(
                &mut map[*offset..*offset + *len * std::mem::size_of::<f64>()],
            ),
        }
    }
}

/// An anonymous map of `len` zeroed `f64`s starting on a 2 MiB boundary, advised for
/// huge pages before it is touched; `None` when the map or the advice fails.
#[cfg(target_os = "linux")]
fn huge_map(len: usize) -> Option<Store> {
    let bytes = len.checked_mul(std::mem::size_of::<f64>())?;
    let total = bytes.checked_add(HUGE_PAGE_BYTES)?;
    let map = memmap2::MmapMut::map_anon(total).ok()?;
    let start = map.as_ptr() as usize;
    let offset = start.next_multiple_of(HUGE_PAGE_BYTES) - start;
    map.advise(memmap2::Advice::HugePage).ok()?;
    // Anonymous maps are zero-filled and page-aligned (so aligned for `f64`).
    Some(Store::Map { map, offset, len })
}

impl std::ops::Deref for F64Buf {
    type Target = [f64];
    #[inline]
    fn deref(&self) -> &[f64] {
        self.as_slice()
    }
}

impl std::ops::DerefMut for F64Buf {
    #[inline]
    fn deref_mut(&mut self) -> &mut [f64] {
        self.as_mut_slice()
    }
}

impl Clone for F64Buf {
    fn clone(&self) -> Self {
        Self::from_slice(self.as_slice())
    }
}

impl std::fmt::Debug for F64Buf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("F64Buf")
            .field("len", &self.len())
            .field("huge_page_advised", &self.is_huge_page_advised())
            .finish()
    }
}

impl PartialEq for F64Buf {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_buffers_hold_the_values() {
        for len in [
            0,
            1,
            7,
            HUGE_PAGE_MIN_LEN - 1,
            HUGE_PAGE_MIN_LEN,
            HUGE_PAGE_MIN_LEN + 3,
        ] {
            let v: Vec<f64> = (0..len).map(|i| (i as f64 * 0.37).sin()).collect();
            let a = F64Buf::from_slice(&v);
            assert_eq!(a.as_slice(), &v[..], "len {len}");
            let b = F64Buf::from_vec(v.clone());
            assert_eq!(b.as_slice(), &v[..]);
            let mut c = a.clone();
            assert_eq!(c, a);
            if len > 0 {
                c[len - 1] = 42.0;
                assert_eq!(c[len - 1], 42.0);
                assert_ne!(c, a);
            }
            assert!(F64Buf::zeroed(len).iter().all(|&x| x == 0.0));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn long_buffers_start_on_a_huge_page_boundary() {
        let b = F64Buf::zeroed(HUGE_PAGE_MIN_LEN);
        if b.is_huge_page_advised() {
            assert_eq!(b.as_ptr() as usize % HUGE_PAGE_BYTES, 0);
        }
        assert!(!F64Buf::zeroed(HUGE_PAGE_MIN_LEN - 1).is_huge_page_advised());
    }
}
