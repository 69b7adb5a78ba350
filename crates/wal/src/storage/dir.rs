//! The directory seam: create, rename and remove files, and make those changes durable.
//!
//! The log replaces its file on truncation (write `name.tmp`, sync, rename, sync the
//! directory), so it needs a directory as well as files. `OsDir` is a real directory;
//! `MemDir` keeps files in memory and hands out storages made by a factory, so tests can
//! put a fault or crash model under every file the log creates.
//!
//! Invariants:
//! - `rename` replaces the target atomically; after `sync` returns `Ok` it is durable.
//! - `MemDir` treats directory changes as durable at once (a simplification the crash
//!   tests rely on: they crash file contents, not directory entries).

use super::{OsStorage, Storage};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// A directory as the log sees it.
pub trait Dir: Send + Sync + std::fmt::Debug {
    /// Opens `name`, creating an empty file if it does not exist.
    fn open(&self, name: &str) -> io::Result<Arc<dyn Storage>>;

    /// Whether `name` exists.
    fn exists(&self, name: &str) -> io::Result<bool>;

    /// Renames `from` to `to`, replacing `to` if it exists.
    fn rename(&self, from: &str, to: &str) -> io::Result<()>;

    /// Removes `name`; a missing file is not an error.
    fn remove(&self, name: &str) -> io::Result<()>;

    /// The names of the files in the directory, sorted (the engine finds the temporary
    /// files a crash left behind by name).
    fn list(&self) -> io::Result<Vec<String>>;

    /// Makes entry changes (create, rename, remove) durable.
    fn sync(&self) -> io::Result<()>;

    /// How messages name the file `name` (its full path, for a directory on disk).
    fn display(&self, name: &str) -> String {
        name.to_owned()
    }

    /// The identity (`Storage::identity`) of the file now at `name`: `Ok(None)` when no
    /// file is there. Directories without identities report `Err(Unsupported)`.
    fn identity(&self, _name: &str) -> io::Result<Option<(u64, u64)>> {
        Err(io::ErrorKind::Unsupported.into())
    }
}

/// A directory of the operating system.
#[derive(Debug, Clone)]
pub struct OsDir {
    path: PathBuf,
}

impl OsDir {
    /// The directory at `path` (which must exist).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        OsDir { path: path.into() }
    }

    /// The directory's path.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

impl Dir for OsDir {
    fn open(&self, name: &str) -> io::Result<Arc<dyn Storage>> {
        Ok(Arc::new(OsStorage::open(&self.path.join(name))?))
    }

    fn display(&self, name: &str) -> String {
        self.path.join(name).display().to_string()
    }

    fn identity(&self, name: &str) -> io::Result<Option<(u64, u64)>> {
        use std::os::unix::fs::MetadataExt;
        match std::fs::metadata(self.path.join(name)) {
            Ok(meta) => Ok(Some((meta.dev(), meta.ino()))),
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    fn exists(&self, name: &str) -> io::Result<bool> {
        self.path.join(name).try_exists()
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        std::fs::rename(self.path.join(from), self.path.join(to))
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        match std::fs::remove_file(self.path.join(name)) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    fn list(&self) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&self.path)? {
            // A name that is not UTF-8 is no file this program wrote.
            if let Ok(name) = entry?.file_name().into_string() {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    fn sync(&self) -> io::Result<()> {
        super::sync_dir(&self.path)
    }
}

type Factory<S> = Box<dyn Fn() -> S + Send + Sync>;

/// An in-memory directory whose new files come from a factory.
pub struct MemDir<S> {
    files: Mutex<BTreeMap<String, Arc<S>>>,
    factory: Factory<S>,
}

impl<S> std::fmt::Debug for MemDir<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.files.lock().keys().cloned().collect();
        f.debug_struct("MemDir").field("files", &names).finish()
    }
}

impl<S: Storage + Default + 'static> MemDir<S> {
    /// An empty directory whose new files are `S::default()`.
    pub fn new() -> Self {
        Self::with_factory(S::default)
    }
}

impl<S: Storage + Default + 'static> Default for MemDir<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: Storage + 'static> MemDir<S> {
    /// An empty directory whose new files come from `factory`.
    pub fn with_factory(factory: impl Fn() -> S + Send + Sync + 'static) -> Self {
        MemDir {
            files: Mutex::new(BTreeMap::new()),
            factory: Box::new(factory),
        }
    }

    /// The file called `name`, with its concrete type (to crash it, inspect it, ...).
    pub fn file(&self, name: &str) -> Option<Arc<S>> {
        self.files.lock().get(name).cloned()
    }

    /// Puts `file` under `name`, replacing any file there.
    pub fn insert(&self, name: &str, file: S) -> Arc<S> {
        let file = Arc::new(file);
        self.files.lock().insert(name.to_owned(), Arc::clone(&file));
        file
    }

    /// The names of all files, sorted.
    pub fn names(&self) -> Vec<String> {
        self.files.lock().keys().cloned().collect()
    }
}

impl<S: Storage + 'static> Dir for MemDir<S> {
    fn open(&self, name: &str) -> io::Result<Arc<dyn Storage>> {
        let mut files = self.files.lock();
        let file = files
            .entry(name.to_owned())
            .or_insert_with(|| Arc::new((self.factory)()));
        Ok(Arc::clone(file) as Arc<dyn Storage>)
    }

    fn exists(&self, name: &str) -> io::Result<bool> {
        Ok(self.files.lock().contains_key(name))
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        let mut files = self.files.lock();
        let file = files.remove(from).ok_or(io::ErrorKind::NotFound)?;
        files.insert(to.to_owned(), file);
        Ok(())
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        self.files.lock().remove(name);
        Ok(())
    }

    fn list(&self) -> io::Result<Vec<String>> {
        Ok(self.names())
    }

    fn sync(&self) -> io::Result<()> {
        Ok(())
    }
}
