//! Memory `serve` holds but no longer uses, given back to the system off the
//! request path: the binary's relocation records before `instructions` are
//! composed; the binary's other pages nothing wrote (code, constants) when the
//! warm-up starts and after each of its steps, and with freed heap when it is
//! done and when a second has passed without calls. The binary's pages go only
//! in a process that asked for it ([`give_back_memory`]: `serve`), never in one
//! that merely runs a server (tests, a library user).
//!
//! glibc keeps what a thread frees in that thread's arena for later reuse and
//! gives memory back only from an arena's top; `serve` runs its work on several
//! threads (the tokio workers, blocking threads, the warm-up), so what the
//! warm-up and each call built and dropped stays resident, scattered over
//! arenas none of them may reuse. `malloc_trim(0)` returns every whole free
//! page of every arena: at once when the warm-up is done, and after calls once
//! [`IDLE_TRIM`] passes without a call (trimming after each of calls in quick
//! succession made the next ones fault the pages back: 0.1–0.6 ms a call).
//!
//! The code works the same way at a coarser grain: the kernel maps a binary's
//! code and constants around each page touched (64 KiB, or the large folio the
//! page cache holds), and keeps them mapped. Start-up runs code no call runs
//! (the command line, `config.yaml`, the composition of `instructions`, the
//! first tool list), the warm-up more (the pattern compilers); once they are
//! done that code is given back, and calls fault back only what they run,
//! which the release link keeps side by side (build.rs, tools/text_order.py).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use tokio::task::JoinHandle;

pub(crate) use crate::hermes::deadlines::IDLE_TRIM;

/// One server's bookkeeping of when to give back (the heap and the code are
/// the process's, but giving back while another server of the process is busy
/// only costs it page faults).
pub(crate) struct Idle {
    /// How long without a call before a trim.
    quiet: Duration,
    /// Calls running now.
    in_flight: AtomicUsize,
    /// Calls started so far: a trim waiting for quiet sees whether one came.
    started: AtomicU64,
    /// Trims done (for the tests).
    trims: AtomicUsize,
    /// Work to run once calls are quiet, in place of the give-back then
    /// ([`Idle::when_quiet`]).
    deferred: std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>,
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
            deferred: Default::default(),
        }
    }

    /// Whether work waits for quiet ([`Self::when_quiet`]).
    #[cfg(test)]
    pub(crate) fn has_deferred(&self) -> bool {
        self.deferred
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    /// Calls started so far.
    pub(crate) fn calls_started(&self) -> u64 {
        self.started.load(SeqCst)
    }

    /// Run `work` on a blocking thread once calls are quiet (no call for
    /// `quiet`: when the give-back would run), instead of that give-back; it
    /// gives back itself when it is done. Replaces work deferred before.
    /// Needs a tokio runtime (outside one, `work` waits for a call's end).
    pub(crate) fn when_quiet(self: &Arc<Self>, work: Box<dyn FnOnce() + Send>) {
        *self.deferred.lock().unwrap_or_else(|p| p.into_inner()) = Some(work);
        // The last call may have ended already: its wait may be over.
        if self.in_flight.load(SeqCst) == 0 {
            let _ = self.clone().wait_for_quiet();
        }
    }

    /// Count a call in flight until the returned guard is dropped.
    pub(crate) fn call(self: &Arc<Self>) -> Call {
        self.started.fetch_add(1, SeqCst);
        self.in_flight.fetch_add(1, SeqCst);
        Call(Some(self.clone()))
    }

    /// A call ended. When it was the last in flight, the wait for quiet
    /// ([`Self::wait_for_quiet`]).
    fn ended(self: Arc<Self>) -> Option<JoinHandle<()>> {
        if self.in_flight.fetch_sub(1, SeqCst) != 1 {
            return None;
        }
        self.wait_for_quiet()
    }

    /// On the current tokio runtime (outside one, nothing), wait `quiet`,
    /// then, unless a call started meanwhile (its end waits anew), on a
    /// blocking thread: the deferred work ([`Self::when_quiet`]) if any, else
    /// the give-back ([`Self::give_back`]). Returns that wait.
    fn wait_for_quiet(self: Arc<Self>) -> Option<JoinHandle<()>> {
        let rt = tokio::runtime::Handle::try_current().ok()?;
        let seen = self.started.load(SeqCst);
        Some(rt.spawn(async move {
            tokio::time::sleep(self.quiet).await;
            // `in_flight` too: a call may have started between this end and
            // the reading of `seen`.
            if self.started.load(SeqCst) == seen && self.in_flight.load(SeqCst) == 0 {
                let _ = tokio::task::spawn_blocking(move || {
                    let work = self
                        .deferred
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .take();
                    match work {
                        Some(work) => work(),
                        None => self.give_back("idle"),
                    }
                })
                .await;
            }
        }))
    }

    /// Give back, now, on this thread, what the work so far left resident:
    /// the free pages of the heap ([`Self::trim_now`]) and the binary's clean
    /// pages ([`release_clean_pages`]; the next call faults back the code it
    /// runs, a fraction of a millisecond). `when` is for the debug log.
    pub(crate) fn give_back(&self, when: &str) {
        self.trim_now();
        release_clean_pages_now(when);
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

/// Whether this process gives memory back ([`give_back_memory`]).
static GIVE_BACK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on this process gives memory back: `serve` asks for it, before its
/// first thread starts; tests and library users that run a server in their own
/// process do not, so their allocator and their code (and a debugger's
/// breakpoints in it) are left alone. It means:
/// - glibc's allocator set for a long-lived process that is idle most of the
///   time: blocks of 64 KiB or more are mapped on their own, so that freeing one
///   returns its memory (by default glibc raises that threshold after the first
///   such free and keeps later ones in the arena), and a free arena's top is
///   given back from 128 KiB; and glibc's test for fixing its arena limit waits
///   for more arenas than a process has threads, so that [`settle_arenas`]
///   fixes it;
/// - [`release_clean_pages`] gives the binary's pages back;
/// - [`settle_arenas`] stops new arenas once the tool list is out.
pub(crate) fn give_back_memory() {
    GIVE_BACK.store(true, SeqCst);
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters, and (the caller's
    // promise) no other thread is running yet to allocate while they change.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 * 1024);
        libc::mallopt(libc::M_ARENA_TEST, 1 << 20);
    }
}

/// From now on no thread of this process gets a new allocator arena (glibc):
/// threads that start later, or allocate for the first time, share the arenas
/// there are (an exited thread's first). Up to the first tool list, each
/// thread keeps its own, so the parallel composition of `instructions` waits
/// on no lock (capped from the start: realistic home 34.6 -> 41.1 ms to
/// `initialize`); after it, the calls' blocking threads and the warm-up's each
/// took an arena of their own, and what one of them freed stayed resident
/// beside the others' (tools/bench_startup.py: 0.2–0.6 MiB of a short
/// session's peak). In a process that
/// asked ([`give_back_memory`]: `serve`) only: it is the whole process's
/// setting. glibc fixes its arena limit once, the first time a thread needs a
/// new arena and none is free after the process has more arenas than
/// `M_ARENA_TEST` (eight by default), which [`give_back_memory`] raised: the
/// limit is fixed here. A cap set in the environment (`MALLOC_ARENA_MAX`) is
/// fixed at the first arena and left as it is.
pub(crate) fn settle_arenas() {
    if !GIVE_BACK.load(SeqCst) {
        return;
    }
    settle_arenas_now();
}

fn settle_arenas_now() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter, under the allocator's
    // own lock; arenas in use stay as they are.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Give back the resident pages of the binary's own files' contents that
/// nothing wrote: its code, its constants and its relocation records
/// (`.rela.dyn`: 62k records, 1.4 MiB of a release build, read once by the
/// loader before `main` and never again: the binary is bound at load,
/// `BIND_NOW`). A short `serve` session touches code and constants it never
/// needs again (the command line, `config.yaml`, the composition of
/// `instructions`, the first tool list, then the warm-up's compilers), yet
/// their pages would stay in the process's resident set for its whole life.
/// `MADV_DONTNEED` on pages of a private file mapping that were never written
/// drops them from the process; the next read or jump there faults them back
/// from the file (the page cache), as the kernel itself may reclaim them under
/// memory pressure. Only in a process that asked ([`give_back_memory`]); see
/// [`clean_pages`] for which pages. Returns the bytes given back: 0 when
/// there is nothing to give or the kernel refuses.
pub(crate) fn release_clean_pages() -> usize {
    if !GIVE_BACK.load(SeqCst) {
        return 0;
    }
    drop_clean_pages()
}

/// [`release_clean_pages`] whether or not the process asked.
fn drop_clean_pages() -> usize {
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    {
        clean_pages()
            .into_iter()
            .filter(dont_need)
            .map(|pages| pages.len())
            .sum()
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
    0
}

/// `MADV_DONTNEED` on `pages`; whether the kernel took it.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn dont_need(pages: &std::ops::Range<usize>) -> bool {
    // SAFETY: only called with ranges of clean_pages: whole pages of private
    // file mappings of this binary whose pages were checked to be the file's
    // own (pagemap); dropping them only makes the next access fault them back
    // from the file.
    unsafe {
        libc::madvise(
            pages.start as *mut std::ffi::c_void,
            pages.len(),
            libc::MADV_DONTNEED,
        ) == 0
    }
}

/// Give back the resident pages of the binary's relocation records
/// (`.rela.dyn`: 62k records, 1.4 MiB of a release build) alone, at once: the
/// loader read them before `main`, nothing reads them again (the binary is
/// bound at load, `BIND_NOW`), and `serve` calls this before it composes
/// `instructions`, so that they are not part of the peak while it does. Unlike
/// [`release_clean_pages`] this leaves the code start-up is running resident.
/// Returns the bytes given back.
pub(crate) fn release_relocation_records() -> usize {
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    {
        let Some(pages) = relocation_record_pages() else {
            return 0;
        };
        if dont_need(&pages) { pages.len() } else { 0 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")))]
    0
}

/// The whole pages of the main program's `DT_RELA` table that lie in
/// [`clean_pages`].
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn relocation_record_pages() -> Option<std::ops::Range<usize>> {
    const DT_RELA: i64 = 7;
    const DT_RELASZ: i64 = 8;
    let (base, phdrs) = main_program()?;
    let entries = dynamic_entries(base, &phdrs);
    let value = |tag| entries.iter().find(|d| d.0 == tag).map(|d| d.1 as usize);
    let (rela, size) = (value(DT_RELA)?, value(DT_RELASZ)?);
    // glibc has made the address absolute; another loader may not have.
    let start = if rela >= base { rela } else { base + rela };
    let end = start.checked_add(size)?;
    let (candidates, page) = unwritten_segments(base, &phdrs)?;
    let pages = start.next_multiple_of(page)..end / page * page;
    let inside = candidates
        .iter()
        .any(|c| c.start <= pages.start && pages.end <= c.end);
    // pagemap of the records alone (start-up's path: not the whole binary's).
    let own = files_own(&open_pagemap()?, &pages, page)?;
    (inside && !pages.is_empty() && own == [pages.clone()]).then_some(pages)
}

/// [`release_clean_pages`], with the bytes given back in the debug log.
pub(crate) fn release_clean_pages_now(when: &str) {
    let bytes = release_clean_pages();
    tracing::debug!("{when}: {bytes} bytes of the binary's clean pages given back");
}

/// The main program's base address and program headers, when they agree
/// with where this code runs: its `PT_PHDR` (if any) lies where the headers
/// were found, and this function lies in one of its executable segments.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn main_program() -> Option<(usize, Vec<libc::Elf64_Phdr>)> {
    use std::ffi::{c_int, c_void};
    type Found = Option<(usize, usize, Vec<libc::Elf64_Phdr>)>;
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        out: *mut c_void,
    ) -> c_int {
        // SAFETY: glibc passes the main program first, its headers valid for
        // the call; `out` is the `Option` below.
        unsafe {
            *out.cast::<Found>() = Some((
                (*info).dlpi_addr as usize,
                (*info).dlpi_phdr as usize,
                std::slice::from_raw_parts((*info).dlpi_phdr, usize::from((*info).dlpi_phnum))
                    .to_vec(),
            ))
        };
        1
    }
    let mut main: Found = None;
    // SAFETY: the callback only copies what it is given into `main`.
    unsafe { libc::dl_iterate_phdr(Some(first), (&raw mut main).cast()) };
    let (base, at, phdrs) = main?;
    let here = main_program as fn() -> Option<(usize, Vec<libc::Elf64_Phdr>)> as usize;
    let phdr_agrees = phdrs
        .iter()
        .filter(|p| p.p_type == libc::PT_PHDR)
        .all(|p| base + p.p_vaddr as usize == at);
    let runs_here = phdrs.iter().any(|p| {
        p.p_type == libc::PT_LOAD
            && p.p_flags & libc::PF_X != 0
            && (base + p.p_vaddr as usize..base + (p.p_vaddr + p.p_memsz) as usize).contains(&here)
    });
    (phdr_agrees && runs_here).then_some((base, phdrs))
}

/// The main program's dynamic section: its (tag, value) pairs up to
/// `DT_NULL`; none without one.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn dynamic_entries(base: usize, phdrs: &[libc::Elf64_Phdr]) -> Vec<(i64, u64)> {
    /// `Elf64_Dyn`.
    #[repr(C)]
    struct Dyn {
        tag: i64,
        val: u64,
    }
    let Some(dynamic) = phdrs.iter().find(|p| p.p_type == libc::PT_DYNAMIC) else {
        return Vec::new();
    };
    let count = dynamic.p_memsz as usize / size_of::<Dyn>();
    // SAFETY: PT_DYNAMIC of the loaded main program: `count` entries, mapped.
    let entries = unsafe {
        std::slice::from_raw_parts((base + dynamic.p_vaddr as usize) as *const Dyn, count)
    };
    entries
        .iter()
        .take_while(|d| d.tag != 0)
        .map(|d| (d.tag, d.val))
        .collect()
}

/// Whether the main program's dynamic section asks for text relocations
/// (`DT_TEXTREL`, or `DF_TEXTREL` in `DT_FLAGS`): then its read-only segments
/// were written at load.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn has_text_relocations(base: usize, phdrs: &[libc::Elf64_Phdr]) -> bool {
    const DT_TEXTREL: i64 = 22;
    const DT_FLAGS: i64 = 30;
    const DF_TEXTREL: u64 = 4;
    dynamic_entries(base, phdrs)
        .iter()
        .any(|&(tag, val)| tag == DT_TEXTREL || (tag == DT_FLAGS && val & DF_TEXTREL != 0))
}

/// The whole pages of the main program's loaded segments that are not
/// writable, within what the file holds (a zero-filled tail was written by the
/// loader), less any page of `PT_GNU_RELRO` and any page that is not the
/// file's own (a private copy: a debugger's breakpoint, a uprobe); none when it
/// has text relocations or `/proc/self/pagemap` cannot be read.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn clean_pages() -> Vec<std::ops::Range<usize>> {
    let Some((candidates, page)) =
        main_program().and_then(|(base, phdrs)| unwritten_segments(base, &phdrs))
    else {
        return Vec::new();
    };
    let Some(map) = open_pagemap() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in &candidates {
        let Some(own) = files_own(&map, p, page) else {
            return Vec::new();
        };
        out.extend(own);
    }
    out
}

/// The whole pages of the main program's loaded segments that are not
/// writable, within what the file holds, less RELRO's pages ([`clean_pages`]
/// before the look at pagemap), and the page size; `None` when it has text
/// relocations. `base` and `phdrs` are [`main_program`]'s.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn unwritten_segments(
    base: usize,
    phdrs: &[libc::Elf64_Phdr],
) -> Option<(Vec<std::ops::Range<usize>>, usize)> {
    if has_text_relocations(base, phdrs) {
        return None;
    }
    let page = page_size()?;
    let at = |p: &libc::Elf64_Phdr, size: u64| {
        base + p.p_vaddr as usize..base + (p.p_vaddr + size) as usize
    };
    // RELRO, widened to whole pages: a page it shares is written.
    let relro: Vec<_> = phdrs
        .iter()
        .filter(|p| p.p_type == libc::PT_GNU_RELRO)
        .map(|p| at(p, p.p_memsz))
        .map(|r| r.start / page * page..r.end.next_multiple_of(page))
        .collect();
    let mut out = Vec::new();
    for seg in phdrs
        .iter()
        .filter(|p| p.p_type == libc::PT_LOAD && p.p_flags & libc::PF_W == 0)
    {
        // Whole pages only: a segment's partial edge page may be shared with a
        // written neighbour.
        let file = at(seg, seg.p_filesz.min(seg.p_memsz));
        let whole = file.start.next_multiple_of(page)..file.end / page * page;
        let mut pages = Vec::from([whole]);
        for r in &relro {
            pages = pages
                .into_iter()
                .flat_map(|p| [p.start..p.end.min(r.start), p.start.max(r.end)..p.end])
                .collect();
        }
        out.extend(pages.into_iter().filter(|p| !p.is_empty()));
    }
    Some((out, page))
}

/// The size of a page.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn page_size() -> Option<usize> {
    // SAFETY: sysconf has no preconditions.
    usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()
}

/// This process's `/proc/self/pagemap`, for [`pagemap`].
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn open_pagemap() -> Option<std::fs::File> {
    std::fs::File::open("/proc/self/pagemap").ok()
}

/// `map`'s ([`open_pagemap`]) entry for each page of `pages` (whole pages of
/// `page` bytes); `None` when it cannot be read.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn pagemap(map: &std::fs::File, pages: &std::ops::Range<usize>, page: usize) -> Option<Vec<u64>> {
    use std::os::unix::fs::FileExt;
    let mut raw = vec![0u8; pages.len() / page * 8];
    map.read_exact_at(&mut raw, (pages.start / page * 8) as u64)
        .ok()?;
    let entries = raw.chunks_exact(8);
    entries
        .map(|e| e.try_into().ok().map(u64::from_le_bytes))
        .collect()
}

/// The runs of `pages` that are the file's own in this process: mapped from
/// the file, or not mapped (and not swapped out). A present page that is not a
/// file page is a private copy someone wrote. `None` when `map`
/// ([`open_pagemap`]) cannot be read.
#[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
fn files_own(
    map: &std::fs::File,
    pages: &std::ops::Range<usize>,
    page: usize,
) -> Option<Vec<std::ops::Range<usize>>> {
    const PRESENT: u64 = 1 << 63;
    const SWAPPED: u64 = 1 << 62;
    const FILE: u64 = 1 << 61;
    let own = |e: u64| {
        if e & PRESENT != 0 {
            e & FILE != 0
        } else {
            e & SWAPPED == 0
        }
    };
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, entry) in pagemap(map, pages, page)?.into_iter().enumerate() {
        if !own(entry) {
            continue;
        }
        let at = pages.start + i * page;
        match runs.last_mut() {
            Some(r) if r.end == at => r.end = at + page,
            _ => runs.push(at..at + page),
        }
    }
    Some(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the page holding `at` is resident in this process
    /// (`/proc/self/pagemap`'s present bit; a per-process fact other threads'
    /// allocations do not blur).
    fn resident(at: usize) -> bool {
        let page = page_size().unwrap();
        let at = at / page * page;
        pagemap(&open_pagemap().unwrap(), &(at..at + page), page).unwrap()[0] >> 63 == 1
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
            // The quick call's own wait may run (and trim) while this one is
            // awaited: only the total says that this one did not trim.
            let wait = running.end().unwrap();
            let quick = idle.call().end().unwrap();
            wait.await.unwrap();
            quick.await.unwrap();
            assert_eq!(idle.trims.load(SeqCst), 2);
        });
        // Dropped, a call ends too.
        rt.block_on(async { drop(idle.call()) });
        assert_eq!(idle.in_flight.load(SeqCst), 0);
    }

    /// The arenas glibc has made in this process (one `<heap nr=` each in
    /// `malloc_info`'s report).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn arenas() -> usize {
        let dir = tempfile::tempdir().unwrap();
        let path = std::ffi::CString::new(dir.path().join("info").to_str().unwrap()).unwrap();
        // SAFETY: a file opened here, written by malloc_info and closed.
        unsafe {
            let f = libc::fopen(path.as_ptr(), c"w".as_ptr());
            assert!(!f.is_null());
            assert_eq!(libc::malloc_info(0, f), 0);
            libc::fclose(f);
        }
        std::fs::read_to_string(dir.path().join("info"))
            .unwrap()
            .matches("<heap nr=")
            .count()
    }

    /// The arenas while `n` new threads are alive at once, each having
    /// allocated.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn arenas_with_threads(n: usize) -> usize {
        let barrier = Arc::new(std::sync::Barrier::new(n + 1));
        let threads: Vec<_> = (0..n)
            .map(|_| {
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    let block = std::hint::black_box(vec![1u8; 4096]);
                    barrier.wait();
                    barrier.wait();
                    drop(block);
                })
            })
            .collect();
        barrier.wait();
        let count = arenas();
        barrier.wait();
        threads.into_iter().for_each(|t| t.join().unwrap());
        count
    }

    /// Once settled, threads that start share the arenas there are, where
    /// before each took its own. In a process of its own (this test alone,
    /// run again by this binary): the cap is the whole process's, and other
    /// tests' ended threads would leave arenas for new ones to reuse.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn settled_arenas_are_shared_by_threads_that_start_later() {
        const CHILD: &str = "HERMES_MCP_TEST_ARENAS_CHILD";
        const NAME: &str =
            "server::idle::tests::settled_arenas_are_shared_by_threads_that_start_later";
        #[allow(clippy::disallowed_methods)] // the test's own marker, not a setting
        if std::env::var_os(CHILD).is_none() {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
                .env(CHILD, "1")
                // A cap from the environment would fix the limit at once.
                .env_remove("MALLOC_ARENA_MAX")
                .env_remove("GLIBC_TUNABLES")
                .output()
                .unwrap();
            let said = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{said}");
            assert!(said.contains("arenas:"), "the child ran no check: {said}");
            return;
        }
        let start = arenas();
        let unsettled = arenas_with_threads(3);
        assert!(unsettled >= start + 3, "{start} -> {unsettled}");
        settle_arenas_now();
        // Three ended threads' arenas are free: six new threads would
        // have made three more.
        let settled = arenas_with_threads(6);
        assert_eq!(settled, unsettled);
        eprintln!("arenas: {start}, 3 threads {unsettled}, settled and 6 threads {settled}");
    }

    /// The tests that give pages back, one at a time (`cargo test` runs a
    /// binary's tests on threads of one process).
    static RELEASES: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// The relocation records' pages are dropped from the process (the
    /// test binary is a position-independent executable with records), and
    /// reading them afterwards faults the same bytes back from the file.
    /// Pages well inside the records are looked at: a read next to their
    /// ends (of `.rodata`, say) may map the edge pages back (fault-around).
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    #[test]
    fn relocation_records_are_given_back_and_read_back_alike() {
        let _alone = RELEASES.lock().unwrap_or_else(|p| p.into_inner());
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

    /// A constant of many whole pages, in `.rodata`: reads elsewhere may map
    /// pages at its edges back (fault-around, large folios), not most of it.
    static TABLE: [u8; 4 << 20] = [0x5A; 4 << 20];

    #[inline(never)]
    fn some_code(x: u64) -> u64 {
        x.rotate_left(7) ^ 0x5A5A
    }

    /// The pages of the binary's code and constants are dropped from the
    /// process, and using them afterwards faults the same bytes back from
    /// the file: the constant reads the same, the function runs. Nothing of
    /// RELRO or of a writable segment is among the pages given back.
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    #[test]
    fn clean_pages_are_given_back_and_read_back_alike() {
        let _alone = RELEASES.lock().unwrap_or_else(|p| p.into_inner());
        let pages = clean_pages();
        let (base, phdrs) = main_program().unwrap();
        let within = |at: usize| pages.iter().any(|p| p.contains(&at));
        let table = std::hint::black_box(&TABLE).as_ptr() as usize;
        let probes: Vec<usize> = (0..TABLE.len())
            .step_by(64 << 10)
            .map(|i| table + i)
            .collect();
        let code = some_code as fn(u64) -> u64 as usize;
        assert!(
            probes.iter().chain([&code]).all(|&at| within(at)),
            "{pages:x?}"
        );
        for p in phdrs.iter().filter(|p| {
            p.p_type == libc::PT_GNU_RELRO
                || (p.p_type == libc::PT_LOAD && p.p_flags & libc::PF_W != 0)
        }) {
            let seg = base + p.p_vaddr as usize..base + (p.p_vaddr + p.p_memsz) as usize;
            assert!(
                pages
                    .iter()
                    .all(|q| q.end <= seg.start || seg.end <= q.start)
            );
        }
        // SAFETY: the addresses are mapped, readable parts of this binary.
        let read = |at: usize| unsafe { std::ptr::read_volatile(at as *const u8) };
        let code_bytes = read(code);
        assert!(probes.iter().all(|&at| read(at) == 0x5A && resident(at)));
        // Not in a process that did not ask (this one has not).
        assert_eq!(release_clean_pages(), 0);
        assert!(probes.iter().all(|&at| resident(at)));
        let given = drop_clean_pages();
        assert_eq!(given, pages.iter().map(|p| p.len()).sum::<usize>());
        let still = probes.iter().filter(|&&at| resident(at)).count();
        assert!(
            still < probes.len() / 4,
            "{still} of {} probes",
            probes.len()
        );
        assert!(probes.iter().all(|&at| read(at) == 0x5A && resident(at)));
        assert_eq!(read(code), code_bytes);
        assert_eq!(
            std::hint::black_box(some_code)(1),
            1u64.rotate_left(7) ^ 0x5A5A
        );
    }

    /// A page someone wrote (a private copy, as a debugger's breakpoint
    /// makes) is not among the clean pages and keeps what was written.
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    #[test]
    fn a_written_page_is_left_alone() {
        static COPIED: [u8; 1 << 20] = [0x33; 1 << 20];
        let _alone = RELEASES.lock().unwrap_or_else(|p| p.into_inner());
        let page = page_size().unwrap();
        let at = (std::hint::black_box(&COPIED).as_ptr() as usize + (512 << 10)) / page * page;
        let (rw, ro) = (libc::PROT_READ | libc::PROT_WRITE, libc::PROT_READ);
        // SAFETY: one whole page inside COPIED, a private file mapping of this
        // binary: writing it makes this process's own copy; nothing else reads
        // COPIED.
        unsafe {
            assert_eq!(libc::mprotect(at as *mut libc::c_void, page, rw), 0);
            std::ptr::write_volatile(at as *mut u8, 0x44);
            assert_eq!(libc::mprotect(at as *mut libc::c_void, page, ro), 0);
        }
        let pages = clean_pages();
        assert!(!pages.iter().any(|p| p.contains(&at)), "{pages:x?}");
        assert!(pages.iter().any(|p| p.contains(&(at + page))));
        drop_clean_pages();
        // SAFETY: a mapped, readable page of this binary.
        assert_eq!(unsafe { std::ptr::read_volatile(at as *const u8) }, 0x44);
    }
}
