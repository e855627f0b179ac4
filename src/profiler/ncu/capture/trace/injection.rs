//! Whether a file can be the CUPTI injection library the CUDA driver loads (`CUDA_INJECTION64_PATH`):
//! a regular file holding a 64-bit ELF shared object, told from its 64-byte ELF header alone, before
//! the workload starts. The check is cheap and loads nothing: a wrong file (a directory, a script, the
//! profile-run executable itself) is refused with what it is, while whether the library's own code
//! works is only known once the workload loads it (a position-independent executable is `ET_DYN`
//! too, so it passes here and fails there). The header's layout is fixed by the ELF
//! specification (the magic at byte 0, class at 4, byte order at 5, `e_type` at 16), so the two
//! fields are read directly rather than through an ELF parsing crate.

use crate::file_kind::Kind;
use std::fs::OpenOptions;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The first four bytes of every ELF file.
const MAGIC: &[u8; 4] = b"\x7fELF";
/// Length of a 64-bit ELF header.
const HEADER_LEN: usize = 64;
/// `e_ident[EI_CLASS]` of a 64-bit object.
const CLASS_64: u8 = 2;
/// `e_type` of a shared object.
const ET_DYN: u16 = 3;

/// Why a file is not a usable injection library, worded to follow the path (`is a directory`,
/// `is an ELF executable (e_type 2), not a shared object`); `Missing` when there is nothing there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unusable {
    Missing,
    Wrong(String),
}

/// `Ok` when `path` is a regular file (links followed) that starts with a 64-bit ELF header whose
/// `e_type` is a shared object.
pub fn check(path: &Path) -> Result<(), Unusable> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Unusable::Missing),
        Err(e) => return Err(Unusable::Wrong(format!("could not be examined ({e})"))),
    };
    if let Some(kind) = Kind::of(&meta).odd() {
        return Err(Unusable::Wrong(format!("is {kind}, not a file")));
    }
    let header =
        read_header(path).map_err(|e| Unusable::Wrong(format!("could not be read ({e})")))?;
    shared_object(&header).map_err(Unusable::Wrong)
}

/// Up to the first [`HEADER_LEN`] bytes of `path`, opened without blocking (the path was a regular
/// file when looked at, but may have been swapped for a FIFO since).
fn read_header(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let mut header = Vec::with_capacity(HEADER_LEN);
    file.take(HEADER_LEN as u64).read_to_end(&mut header)?;
    Ok(header)
}

/// Whether `header` (a file's first bytes) is a 64-bit ELF shared object's header; why not otherwise.
fn shared_object(header: &[u8]) -> Result<(), String> {
    if header.is_empty() {
        return Err("is empty, not an ELF shared object".into());
    }
    if !header.starts_with(MAGIC) {
        let start: String = header
            .iter()
            .take(MAGIC.len())
            .flat_map(|b| std::ascii::escape_default(*b))
            .map(char::from)
            .collect();
        return Err(format!(
            "is not an ELF file: it starts with `{start}`, not the ELF magic `\\x7fELF`"
        ));
    }
    if header.len() < HEADER_LEN {
        return Err(format!(
            "is {} bytes long, shorter than a 64-bit ELF header ({HEADER_LEN} bytes)",
            header.len()
        ));
    }
    if header[4] != CLASS_64 {
        return Err(format!(
            "is not a 64-bit ELF file (class {}): the CUDA driver loads only a 64-bit injection library",
            header[4]
        ));
    }
    let e_type = match header[5] {
        1 => u16::from_le_bytes([header[16], header[17]]),
        2 => u16::from_be_bytes([header[16], header[17]]),
        other => return Err(format!("is an ELF file of unknown byte order ({other})")),
    };
    match e_type {
        ET_DYN => Ok(()),
        1 => Err("is an ELF relocatable object (e_type 1, a `.o`), not a shared object".into()),
        2 => Err("is an ELF executable (e_type 2), not a shared object".into()),
        4 => Err("is an ELF core dump (e_type 4), not a shared object".into()),
        other => Err(format!(
            "is an ELF file of type {other}, not a shared object (e_type {ET_DYN})"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-bit little-endian ELF header of type `e_type`, the rest zero.
    fn header(e_type: u16) -> Vec<u8> {
        let mut h = vec![0u8; HEADER_LEN];
        h[..4].copy_from_slice(MAGIC);
        h[4] = CLASS_64;
        h[5] = 1;
        h[6] = 1;
        h[16..18].copy_from_slice(&e_type.to_le_bytes());
        h
    }

    #[test]
    fn only_a_64_bit_shared_object_passes() {
        assert_eq!(shared_object(&header(3)), Ok(()));
        let mut big_endian = header(0);
        big_endian[5] = 2;
        big_endian[16..18].copy_from_slice(&3u16.to_be_bytes());
        assert_eq!(shared_object(&big_endian), Ok(()));
        let why = |h: &[u8]| shared_object(h).unwrap_err();
        assert!(why(&header(2)).contains("ELF executable (e_type 2)"));
        assert!(why(&header(1)).contains("relocatable"));
        assert!(why(&header(9)).contains("type 9"));
        let mut class32 = header(3);
        class32[4] = 1;
        assert!(why(&class32).contains("not a 64-bit ELF file (class 1)"));
        assert!(why(&header(3)[..20]).contains("is 20 bytes long"));
        assert!(why(b"").contains("is empty"));
        let script = why(b"#!/bin/sh\n");
        assert!(script.contains("starts with `#!/b`"), "{script}");
        let gzip = why(b"\x1f\x8b\x08\x00");
        assert!(gzip.contains(r"`\x1f\x8b\x08\x00`"), "{gzip}");
    }

    #[test]
    fn a_file_is_checked_by_kind_then_header() {
        let dir = tempfile::tempdir().unwrap();
        let at = |name: &str| dir.path().join(name);
        std::fs::write(at("lib.so"), header(3)).unwrap();
        assert_eq!(check(&at("lib.so")), Ok(()));
        std::os::unix::fs::symlink(at("lib.so"), at("link.so")).unwrap();
        assert_eq!(check(&at("link.so")), Ok(()), "a link to a library is one");
        assert_eq!(check(&at("nowhere.so")), Err(Unusable::Missing));
        std::fs::create_dir(at("folder.so")).unwrap();
        assert_eq!(
            check(&at("folder.so")),
            Err(Unusable::Wrong("is a directory, not a file".into()))
        );
        nix::unistd::mkfifo(&at("fifo.so"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(
            check(&at("fifo.so")),
            Err(Unusable::Wrong("is a FIFO, not a file".into())),
            "refused without waiting for a writer"
        );
    }
}
