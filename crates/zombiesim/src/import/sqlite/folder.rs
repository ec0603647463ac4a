//! The capture folder: finding its logs (plain or compressed) and naming the files the
//! importer does not read.

use crate::import::member;
use std::path::{Path, PathBuf};

/// The first of `names` (or with `.gz` / `.zst`) in `folder`.
pub(super) fn find(folder: &Path, names: &[&str]) -> Option<PathBuf> {
    names.iter().find_map(|name| {
        ["", ".gz", ".zst"]
            .iter()
            .map(|ext| member(folder, &format!("{name}{ext}")))
            .find(|p| p.is_file())
    })
}

pub(super) fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The folder's files other than `read` (and hidden ones), by name, sorted.
pub(super) fn unread_files(folder: &Path, read: &[Option<&Path>]) -> Vec<String> {
    let same = |p: &Path, q: &Path| {
        p == q
            || p.canonicalize()
                .ok()
                .is_some_and(|c| q.canonicalize().ok() == Some(c))
    };
    let Ok(dir) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .map(|e| e.path())
        .filter(|p| !read.iter().flatten().any(|q| same(p, q)))
        .map(|p| file_name(&p))
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}
