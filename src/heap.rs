//! The static musl build's heap (Cargo.toml says why it is not musl's own allocator): dlmalloc,
//! over memory that a fork does not pass on (`MADV_DONTFORK`).
//!
//! The one fork redlock makes is `exec`'s guardian (exec/guardian.rs), which runs only raw
//! system calls on values prepared on the stack before the fork, and never touches the heap.
//! Shared with it, every heap page we wrote to afterwards would first be copied for us
//! (copy-on-write): a page fault and a page copy each, for memory the guardian never reads. The
//! command itself is started by `posix_spawnp`, which borrows our memory without copying it,
//! so it is not concerned.

use dlmalloc::{Allocator, Dlmalloc};
use std::alloc::{GlobalAlloc, Layout};
use std::sync::Mutex;

/// The global allocator of the musl build (main.rs).
pub(crate) struct Heap(Mutex<Dlmalloc<ForkPrivate>>);

impl Heap {
    pub(crate) const fn new() -> Heap {
        Heap(Mutex::new(Dlmalloc::new_with_allocator(ForkPrivate)))
    }

    fn with<T>(&self, f: impl FnOnce(&mut Dlmalloc<ForkPrivate>) -> T) -> T {
        // A panic while the lock is held aborts (panic = "abort"), so it is never poisoned in
        // a way that matters; a poisoned lock still guards a consistent heap.
        let mut heap = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut heap)
    }
}

// SAFETY: every call goes to dlmalloc under the lock, with the layout the caller gives, which is
// what dlmalloc's own `GlobalDlmalloc` does.
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for the impl.
        self.with(|heap| unsafe { heap.malloc(layout.size(), layout.align()) })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this heap with `layout` (GlobalAlloc's contract).
        self.with(|heap| unsafe { heap.free(ptr, layout.size(), layout.align()) })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for the impl.
        self.with(|heap| unsafe { heap.calloc(layout.size(), layout.align()) })
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this heap with `layout` (GlobalAlloc's contract).
        self.with(|heap| unsafe { heap.realloc(ptr, layout.size(), layout.align(), new_size) })
    }
}

/// The system memory under the heap: anonymous mappings (as dlmalloc's own unix allocator
/// makes them), each marked not to be passed on by a fork. A mapping moved or grown by mremap
/// keeps the mark.
pub(crate) struct ForkPrivate;

// SAFETY: each call maps, remaps or unmaps only memory dlmalloc got from `alloc` (its contract),
// and `alloc` returns fresh zeroed pages or a null pointer.
unsafe impl Allocator for ForkPrivate {
    fn alloc(&self, size: usize) -> (*mut u8, usize, u32) {
        let (protection, flags) = (
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_ANON | libc::MAP_PRIVATE,
        );
        // SAFETY: a new anonymous mapping, placed by the kernel.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), size, protection, flags, -1, 0) };
        if ptr == libc::MAP_FAILED {
            return (std::ptr::null_mut(), 0, 0);
        }
        // SAFETY: the range is the mapping just made. Should the advice fail, the mapping is
        // shared with a fork as before: slower, not wrong.
        unsafe { libc::madvise(ptr, size, libc::MADV_DONTFORK) };
        (ptr.cast(), size, 0)
    }

    fn remap(&self, ptr: *mut u8, oldsize: usize, newsize: usize, can_move: bool) -> *mut u8 {
        let flags = if can_move { libc::MREMAP_MAYMOVE } else { 0 };
        // SAFETY: `ptr` and `oldsize` are a mapping of ours (dlmalloc's contract).
        let ptr = unsafe { libc::mremap(ptr.cast(), oldsize, newsize, flags) };
        if ptr == libc::MAP_FAILED {
            std::ptr::null_mut()
        } else {
            ptr.cast()
        }
    }

    fn free_part(&self, ptr: *mut u8, oldsize: usize, newsize: usize) -> bool {
        // SAFETY: as for `remap`; the tail unmapped is the part of it past `newsize`.
        unsafe {
            if libc::mremap(ptr.cast(), oldsize, newsize, 0) != libc::MAP_FAILED {
                return true;
            }
            libc::munmap(ptr.add(newsize).cast(), oldsize - newsize) == 0
        }
    }

    fn free(&self, ptr: *mut u8, size: usize) -> bool {
        // SAFETY: as for `remap`.
        unsafe { libc::munmap(ptr.cast(), size) == 0 }
    }

    fn can_release_part(&self, _flags: u32) -> bool {
        true
    }

    fn allocates_zeros(&self) -> bool {
        true
    }

    fn page_size(&self) -> usize {
        4096
    }
}
