//! Memory `serve` holds but no longer uses, given back to the system off the
//! request path: the binary's relocation records when the warm-up starts (after
//! the first tool list), and freed heap when the warm-up is done and when a
//! second has passed without calls.
//!
//! glibc keeps what a thread frees in that thread's arena for later reuse and
//! gives memory back only from an arena's top; `serve` runs its work on several
//! threads (the tokio workers, blocking threads, the warm-up), so what the
//! warm-up and each call built and dropped stays resident, scattered over
//! arenas none of them may reuse. `malloc_trim(0)` returns every whole free
//! page of every arena: at once when the warm-up is done, and after calls once
//! [`IDLE_TRIM`] passes without a call (trimming after each of calls in quick
//! succession made the next ones fault the pages back: 0.1–0.6 ms a call).
//! Idle after tools/bench_startup.py's short session on its realistic home,
//! the process holds 0.8 MiB less anonymous memory than it did without the
//! trims (6.2 against 7.0 MiB).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use tokio::task::JoinHandle;

pub(crate) use crate::hermes::deadlines::IDLE_TRIM;

/// One server's bookkeeping of when to trim (the heap is the process's, but a
/// trim while another server of the process is busy only costs it a few page
/// faults).
#[derive(Debug)]
pub(crate) struct Idle {
    /// How long without a call before a trim.
    quiet: Duration,
    /// Calls running now.
    in_flight: AtomicUsize,
    /// Calls started so far: a trim waiting for quiet sees whether one came.
    started: AtomicU64,
    /// Trims done (for the tests).
    trims: AtomicUsize,
}

/// Held for the length of one call; the last one in flight to end starts the
/// wait for quiet. Nests: a call inside a call counts twice.
pub(crate) struct Call(Option<Arc<Idle>>);

impl Idle {
    /// Trim after `quiet` without calls.
    pub(crate) fn new(quiet: Duration) -> Idle {
        Idle {
            quiet,
            in_flight: AtomicUsize::new(0),
            started: AtomicU64::new(0),
            trims: AtomicUsize::new(0),
        }
    }

    /// Count a call in flight until the returned guard is dropped.
    pub(crate) fn call(self: &Arc<Self>) -> Call {
        self.started.fetch_add(1, SeqCst);
        self.in_flight.fetch_add(1, SeqCst);
        Call(Some(self.clone()))
    }

    /// A call ended. When it was the last in flight: on the current tokio
    /// runtime (outside one, nothing), wait `quiet`, then trim on a blocking
    /// thread unless a call started meanwhile (its end waits anew). Returns
    /// that wait.
    fn ended(self: Arc<Self>) -> Option<JoinHandle<()>> {
        if self.in_flight.fetch_sub(1, SeqCst) != 1 {
            return None;
        }
        let rt = tokio::runtime::Handle::try_current().ok()?;
        let seen = self.started.load(SeqCst);
        Some(rt.spawn(async move {
            tokio::time::sleep(self.quiet).await;
            // `in_flight` too: a call may have started between this end and
            // the reading of `seen`.
            if self.started.load(SeqCst) == seen && self.in_flight.load(SeqCst) == 0 {
                let _ = tokio::task::spawn_blocking(move || self.trim_now()).await;
            }
        }))
    }

    /// Give every whole free page of the allocator's arenas back (glibc), now,
    /// on this thread.
    pub(crate) fn trim_now(&self) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only walks the allocator's own free lists under
        // their locks.
        unsafe {
            libc::malloc_trim(0);
        }
        self.trims.fetch_add(1, SeqCst);
    }
}

impl Call {
    /// End the call now; the wait for quiet it started, if it was the last.
    #[cfg(test)]
    fn end(mut self) -> Option<JoinHandle<()>> {
        self.0.take()?.ended()
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if let Some(idle) = self.0.take() {
            idle.ended();
        }
    }
}

/// [`release_relocation_records`], the first time it is asked in the process.
pub(crate) fn release_relocation_records_once() {
    static RELEASED: std::sync::Once = std::sync::Once::new();
    RELEASED.call_once(|| {
        let bytes = release_relocation_records();
        tracing::debug!("relocation records given back: {bytes} bytes");
    });
}

/// Give back the resident pages of the binary's relocation records
/// (`.rela.dyn`: 62k records, 1.4 MiB of a release build, about a twelfth of a
/// short `serve` session's peak). The loader reads them once, before `main`, to
/// relocate the binary; nothing reads them again (the binary is bound at load,
/// `BIND_NOW`, and `.rela.plt` is not touched here), yet their pages would stay
/// in the process's resident set for its whole life. `MADV_DONTNEED` on pages
/// of a private file mapping that were never written drops them from the
/// process; a later read would fault them back from the file. Only whole pages
/// inside a segment that is neither writable nor executable are given back,
/// never one of RELRO (written by the relocations). Returns the bytes given
/// back: 0 when there is nothing to give or the kernel refuses.
pub(crate) fn release_relocation_records() -> usize {
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    {
        let Some(pages) = relocation_record_pages() else {
            return 0;
        };
        // SAFETY: the range is whole pages of a read-only private file mapping
        // of this binary that nothing writes (relocation_record_pages); dropping
        // them only makes a later read fault them back from the file.
        let done = unsafe {
            libc::madvise(
                pages.start as *mut std::ffi::c_void,
                pages.len(),
                libc::MADV_DONTNEED,
            )
        };
        if done == 0 { pages.len() } else { 0 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
    0
}

/// The whole pages of the main program's `DT_RELA` table, when they lie in a
/// loaded segment that is neither writable nor executable and outside
/// `PT_GNU_RELRO`.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn relocation_record_pages() -> Option<std::ops::Range<usize>> {
    use std::ffi::{c_int, c_void};
    /// `Elf64_Dyn`.
    #[repr(C)]
    struct Dyn {
        tag: i64,
        val: u64,
    }
    const DT_NULL: i64 = 0;
    const DT_RELA: i64 = 7;
    const DT_RELASZ: i64 = 8;
    unsafe extern "C" fn main_program(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        out: *mut c_void,
    ) -> c_int {
        // SAFETY: glibc passes the main program first, its headers valid for
        // the call; `out` is the `Option` below.
        unsafe {
            *out.cast::<Option<(usize, Vec<libc::Elf64_Phdr>)>>() = Some((
                (*info).dlpi_addr as usize,
                std::slice::from_raw_parts((*info).dlpi_phdr, usize::from((*info).dlpi_phnum))
                    .to_vec(),
            ))
        };
        1
    }
    let mut main: Option<(usize, Vec<libc::Elf64_Phdr>)> = None;
    // SAFETY: the callback only copies what it is given into `main`.
    unsafe { libc::dl_iterate_phdr(Some(main_program), (&raw mut main).cast()) };
    let (base, phdrs) = main?;
    let at =
        |p: &libc::Elf64_Phdr| base + p.p_vaddr as usize..base + (p.p_vaddr + p.p_memsz) as usize;
    let dynamic = phdrs.iter().find(|p| p.p_type == libc::PT_DYNAMIC)?;
    let count = dynamic.p_memsz as usize / size_of::<Dyn>();
    // SAFETY: PT_DYNAMIC of the loaded main program: `count` entries, mapped.
    let entries = unsafe { std::slice::from_raw_parts(at(dynamic).start as *const Dyn, count) };
    let value = |tag| {
        let mut entries = entries.iter().take_while(|d| d.tag != DT_NULL);
        entries.find(|d| d.tag == tag).map(|d| d.val as usize)
    };
    let (rela, size) = (value(DT_RELA)?, value(DT_RELASZ)?);
    // glibc has made the address absolute; another loader may not have.
    let start = if rela >= base { rela } else { base + rela };
    let records = start..start.checked_add(size)?;
    let inside = |r: &std::ops::Range<usize>| r.start <= records.start && records.end <= r.end;
    let read_only = phdrs.iter().any(|p| {
        p.p_type == libc::PT_LOAD && p.p_flags & (libc::PF_W | libc::PF_X) == 0 && inside(&at(p))
    });
    let overlaps = |r: std::ops::Range<usize>| r.start < records.end && records.start < r.end;
    let relro = phdrs
        .iter()
        .any(|p| p.p_type == libc::PT_GNU_RELRO && overlaps(at(p)));
    // SAFETY: sysconf has no preconditions.
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
    let pages = records.start.next_multiple_of(page)..records.end / page * page;
    (read_only && !relro && !pages.is_empty()).then_some(pages)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the page holding `at` is resident in this process
    /// (`/proc/self/pagemap`'s present bit; a per-process fact other threads'
    /// allocations do not blur).
    fn resident(at: usize) -> bool {
        use std::io::{Read, Seek, SeekFrom};
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let mut map = std::fs::File::open("/proc/self/pagemap").unwrap();
        map.seek(SeekFrom::Start((at / page * 8) as u64)).unwrap();
        let mut entry = [0u8; 8];
        map.read_exact(&mut entry).unwrap();
        u64::from_le_bytes(entry) >> 63 == 1
    }

    /// Free memory between live blocks (which glibc never gives back from an
    /// arena's top) is returned by a trim.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_trim_gives_back_free_pages_between_live_blocks() {
        // 48 KiB blocks (under serve's 64 KiB mmap threshold and glibc's
        // default one), every other one freed: 48 KiB holes between them.
        let mut blocks: Vec<Vec<u8>> = (0..256).map(|i| vec![i as u8; 48 << 10]).collect();
        let middles: Vec<usize> = blocks
            .iter()
            .skip(1)
            .step_by(2)
            .map(|b| b.as_ptr() as usize + (24 << 10))
            .collect();
        let kept: Vec<Vec<u8>> = blocks.drain(..).step_by(2).collect();
        assert!(middles.iter().all(|&m| resident(m)));
        Idle::new(IDLE_TRIM.get()).trim_now();
        let still = middles.iter().filter(|&&m| resident(m)).count();
        // A hole reused meanwhile by another thread's allocation stays.
        assert!(
            still < middles.len() / 4,
            "{still} of {} holes",
            middles.len()
        );
        assert!(kept.iter().enumerate().all(|(i, b)| b[0] == (2 * i) as u8));
    }

    /// Overlapping calls wait for quiet once, when the last ends; a call
    /// that starts during the wait cancels its trim and waits anew when it
    /// ends. The trim runs on a blocking thread of the runtime.
    #[test]
    fn the_last_call_in_flight_trims_after_quiet_unless_another_starts() {
        let idle = Arc::new(Idle::new(Duration::ZERO));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            let first = idle.call();
            let second = idle.call();
            assert!(first.end().is_none());
            second.end().unwrap().await.unwrap();
            assert_eq!(idle.trims.load(SeqCst), 1);
            // A wait is not polled before the next call starts: one still
            // running when the wait ends, and one started and ended during it.
            let wait = idle.call().end().unwrap();
            let running = idle.call();
            wait.await.unwrap();
            assert_eq!(idle.trims.load(SeqCst), 1);
            let wait = running.end().unwrap();
            let quick = idle.call().end().unwrap();
            wait.await.unwrap();
            assert_eq!(idle.trims.load(SeqCst), 1);
            quick.await.unwrap();
            assert_eq!(idle.trims.load(SeqCst), 2);
        });
        // Dropped, a call ends too.
        rt.block_on(async { drop(idle.call()) });
        assert_eq!(idle.in_flight.load(SeqCst), 0);
    }

    /// The relocation records' pages are dropped from the process (the
    /// test binary is a position-independent executable with records), and
    /// reading them afterwards faults the same bytes back from the file.
    /// Pages well inside the records are looked at: a read next to their
    /// ends (of `.rodata`, say) may map the edge pages back (fault-around).
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    #[test]
    fn relocation_records_are_given_back_and_read_back_alike() {
        let pages = relocation_record_pages().expect("the test binary has relocation records");
        let inner =
            [pages.start + pages.len() / 4, pages.start + pages.len() / 2].map(|at| at & !7);
        // SAFETY: the pages are mapped, readable parts of this binary.
        let read = |at: usize| unsafe { std::ptr::read_volatile(at as *const u64) };
        let first = inner.map(read);
        assert!(inner.iter().all(|&at| resident(at)));
        assert_eq!(release_relocation_records(), pages.len());
        assert!(inner.iter().all(|&at| !resident(at)));
        assert_eq!(inner.map(read), first);
        assert!(inner.iter().all(|&at| resident(at)));
    }
}
