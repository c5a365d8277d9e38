//! Reading a process's parent out of Linux's `/proc/<pid>/stat` line: the one parse both Unix
//! backends use for `launch`'s "a window of a process its program started" (the file itself is
//! read by the backend; this crate does no platform I/O).

/// The parent pid in a `/proc/<pid>/stat` line. The name field may hold spaces and
/// parentheses, so the fields are counted after the last `)`: state, then the parent.
pub fn parent_in_stat(stat: &str) -> Option<u32> {
    stat[stat.rfind(')')? + 1..].split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::parent_in_stat;

    #[test]
    fn the_parent_follows_the_last_parenthesis() {
        assert_eq!(parent_in_stat("4242 (bash) S 17 4242 4242 0 -1"), Some(17));
        assert_eq!(parent_in_stat("4243 (a) b) (c) R 99 1 1"), Some(99), "a name with ) and spaces");
        assert_eq!(parent_in_stat("4244 (x"), None);
        assert_eq!(parent_in_stat(""), None);
    }
}
