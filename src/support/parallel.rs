//! Work spread over jitrun's own threads, results in order.

/// `f` over `items`, results in item order; on as many threads as CPUs
/// when `parallel`. Threads take the next item as they finish one, so a
/// few large items among small ones still spread evenly.
pub(crate) fn map_in_order<T: Sync, R: Send>(items: &[T], parallel: bool, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_in_order_after(items, parallel, f, || ()).0
}

/// [`map_in_order`], where the calling thread first runs `first` while the
/// helper threads start on the items, then takes items too.
pub(crate) fn map_in_order_after<T: Sync, R: Send, F>(
    items: &[T],
    parallel: bool,
    f: impl Fn(&T) -> R + Sync,
    first: impl FnOnce() -> F,
) -> (Vec<R>, F) {
    let threads = if parallel { link_threads().min(items.len()) } else { 1 };
    if threads < 2 {
        let first = first();
        return (items.iter().map(f).collect(), first);
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(item) = items.get(i) else { return done };
            done.push((i, f(item)));
        }
    };
    let mut results: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    let helpers: Vec<_> = (1..threads).map(|_| crate::support::heap::on_helper_heap(work)).collect();
    // Many items make much to allocate, on the calling thread too.
    let (theirs, (first, mine)) = crate::support::threads::run_beside(helpers, || (first(), work()));
    for (i, result) in theirs.into_iter().flatten().chain(mine) {
        results[i] = Some(result);
    }
    (results.into_iter().map(|r| r.expect("every item is taken once")).collect(), first)
}

/// How many threads a link may use: as many as CPUs, but none besides the
/// caller's when helper threads are forbidden
/// ([`crate::support::threads::forbid_helper_threads`]).
pub(crate) fn link_threads() -> usize {
    if crate::support::threads::helper_threads_forbidden() {
        1
    } else {
        crate::support::threads::cpu_count()
    }
}
