//! Where the local server's log lines go: gathered in memory and written to stdout by a thread
//! of their own every few milliseconds, many lines per write. A request pays for copying its
//! line, never for a system call or for waking another thread; no line is ever dropped.

use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// How long a line may wait before it is written.
const WRITE_EVERY: Duration = Duration::from_millis(20);
/// Gathered bytes past which the writing thread is woken before its time.
const WAKE_AT: usize = 256 * 1024;
/// Gathered bytes past which a request writes them itself: a stdout that does not keep up
/// slows the server rather than growing its memory or losing lines.
const WRITE_INLINE_AT: usize = 4 * 1024 * 1024;

struct Shared {
    gathered: Mutex<Gathered>,
    wake: Condvar,
    /// Taken while `gathered` is held, so that batches reach it in the order they were gathered.
    out: Mutex<Box<dyn Write + Send>>,
}

#[derive(Default)]
struct Gathered {
    lines: Vec<u8>,
    closing: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Gathered> {
        self.gathered.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_out(&self) -> MutexGuard<'_, Box<dyn Write + Send>> {
        self.out.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The writer handed to the log subscriber ([`MakeWriter`]).
#[derive(Clone)]
pub struct Batched(Arc<Shared>);

/// Writes what is still gathered, and stops the writing thread, when dropped.
pub struct WriteTheRest {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// A writer to stdout, and the guard that writes the last lines when `main` returns.
pub fn batched_stdout() -> (Batched, WriteTheRest) {
    batched(Box::new(io::stdout()))
}

fn batched(out: Box<dyn Write + Send>) -> (Batched, WriteTheRest) {
    let shared = Arc::new(Shared {
        gathered: Mutex::default(),
        wake: Condvar::new(),
        out: Mutex::new(out),
    });
    let writing = shared.clone();
    let thread = std::thread::Builder::new()
        .name("log-writer".into())
        .spawn(move || write_until_closed(&writing))
        .expect("the log thread starts");
    (
        Batched(shared.clone()),
        WriteTheRest {
            shared,
            thread: Some(thread),
        },
    )
}

fn write_until_closed(shared: &Shared) {
    // Two buffers trade places, so that neither side allocates once both have grown.
    let mut writing = Vec::new();
    loop {
        let (mut out, closing) = {
            let (mut gathered, _) = shared
                .wake
                .wait_timeout_while(shared.lock(), WRITE_EVERY, |g| {
                    !g.closing && g.lines.len() < WAKE_AT
                })
                .unwrap_or_else(|p| p.into_inner());
            let out = shared.lock_out();
            std::mem::swap(&mut gathered.lines, &mut writing);
            (out, gathered.closing)
        };
        if !writing.is_empty() {
            write_out(&mut out, &writing);
            writing.clear();
        }
        if closing {
            return;
        }
    }
}

fn write_out(out: &mut Box<dyn Write + Send>, lines: &[u8]) {
    // A closed stdout loses the log, not the server.
    let _ = out.write_all(lines).and_then(|()| out.flush());
}

impl Drop for WriteTheRest {
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One log line's write.
pub struct Line<'a>(&'a Shared);

impl Write for Line<'_> {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        let shared = self.0;
        let mut gathered = shared.lock();
        if gathered.closing {
            write_out(&mut shared.lock_out(), line);
            return Ok(line.len());
        }
        gathered.lines.extend_from_slice(line);
        let size = gathered.lines.len();
        if size >= WRITE_INLINE_AT {
            write_out(&mut shared.lock_out(), &gathered.lines);
            gathered.lines.clear();
        } else if size >= WAKE_AT {
            shared.wake.notify_one();
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Batched {
    type Writer = Line<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        Line(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A destination the test can read while the writer holds it.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    #[test]
    fn a_line_is_written_within_moments_without_closing() {
        let captured = Captured::default();
        let (writer, _rest) = batched(Box::new(captured.clone()));
        writer.make_writer().write_all(b"one\n").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while captured.text().is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(captured.text(), "one\n");
    }

    #[test]
    fn concurrent_lines_all_arrive_whole_and_in_each_writers_order() {
        let captured = Captured::default();
        let (writer, rest) = batched(Box::new(captured.clone()));
        let writer = Arc::new(writer);
        // Enough bytes to cross both the early wake and the inline write.
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let writer = writer.clone();
                std::thread::spawn(move || {
                    let padding = "x".repeat(200);
                    for i in 0..20_000 {
                        let line = format!("{t} {i} {padding}\n");
                        writer.make_writer().write_all(line.as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        drop(rest);
        let text = captured.text();
        let mut next = [0usize; 4];
        for line in text.lines() {
            let mut parts = line.split(' ');
            let t: usize = parts.next().unwrap().parse().unwrap();
            let i: usize = parts.next().unwrap().parse().unwrap();
            assert_eq!(parts.next().unwrap().len(), 200, "a whole line: {line}");
            assert_eq!(i, next[t], "writer {t}'s lines in order");
            next[t] += 1;
        }
        assert_eq!(next, [20_000; 4], "no line lost");
    }

    #[test]
    fn lines_after_closing_are_written_directly() {
        let captured = Captured::default();
        let (writer, rest) = batched(Box::new(captured.clone()));
        writer.make_writer().write_all(b"before\n").unwrap();
        drop(rest);
        writer.make_writer().write_all(b"after\n").unwrap();
        assert_eq!(captured.text(), "before\nafter\n");
    }
}
