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

    /// A buffer of `len` values filled by `fill` (which receives `len` zeros), with
    /// room for `spare` more values that [`F64Buf::extend_filled`] can then add without
    /// moving the others. The room is reserved address space: a page of it that is never
    /// written is never given memory.
    pub fn from_fn_with_spare(len: usize, spare: usize, fill: impl FnOnce(&mut [f64])) -> Self {
        let mut buf = Self::zeroed_with_spare(len, spare);
        fill(buf.as_mut_slice());
        buf
    }

    /// `len` zeros.
    pub fn zeroed(len: usize) -> Self {
        Self::zeroed_with_spare(len, 0)
    }

    /// `len` zeros, with room for `spare` more values (see [`F64Buf::from_fn_with_spare`]).
    fn zeroed_with_spare(len: usize, spare: usize) -> Self {
        let cap = len.saturating_add(spare);
        #[cfg(target_os = "linux")]
        if len >= HUGE_PAGE_MIN_LEN {
            if let Some(Store::Map { map, offset, .. }) = huge_map(cap) {
                return Self {
                    store: Store::Map { map, offset, len },
                };
            }
        }
        let mut v = Vec::with_capacity(cap);
        v.resize(len, 0.0);
        Self {
            store: Store::Heap(v),
        }
    }

    /// Appends `extra` copies of `value`: in place when the buffer has the room (see
    /// [`F64Buf::from_fn_with_spare`]), else by moving the values to a new buffer.
    pub fn extend_filled(&mut self, extra: usize, value: f64) {
        let len = self.len();
        let new_len = len.saturating_add(extra);
        match &mut self.store {
            Store::Heap(v) => {
                v.resize(new_len, value);
                return;
            }
            #[cfg(target_os = "linux")]
            Store::Map { map, offset, len } => {
                let room = (map.len() - *offset) / std::mem::size_of::<f64>();
                if new_len <= room {
                    *len = new_len;
                    self.as_mut_slice()[new_len - extra..].fill(value);
                    return;
                }
            }
        }
        let old = std::mem::replace(self, Self::zeroed(0));
        *self = Self::from_fn(new_len, |out| {
            out[..len].copy_from_slice(&old);
            out[len..].fill(value);
        });
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

    #[test]
    fn extend_filled_appends_in_place_or_by_moving() {
        for len in [0, 5, HUGE_PAGE_MIN_LEN, HUGE_PAGE_MIN_LEN + 3] {
            let v: Vec<f64> = (0..len).map(|i| i as f64 + 0.5).collect();
            for spare in [0, 7, 1000] {
                let mut a = F64Buf::from_fn_with_spare(len, spare, |o| o.copy_from_slice(&v));
                assert_eq!(a.as_slice(), &v[..]);
                let place = a.as_ptr();
                a.extend_filled(7, -2.0);
                assert_eq!(a.len(), len + 7);
                assert_eq!(&a[..len], &v[..]);
                assert!(a[len..].iter().all(|&x| x == -2.0));
                if spare >= 7 && len > 0 {
                    assert_eq!(a.as_ptr(), place, "len {len} spare {spare}: moved");
                }
                a.extend_filled(3000, 1.0);
                assert_eq!(a.len(), len + 3007);
                assert_eq!(&a[..len], &v[..]);
                assert!(a[len + 7..].iter().all(|&x| x == 1.0));
            }
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
