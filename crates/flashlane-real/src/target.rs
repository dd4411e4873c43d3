//! The target of a replay or probe, and the safety rules (docs/real-drive.md, "Safety"):
//! a path that does not exist becomes a new file, created for the run and removed after it
//! (unless `--keep`); an existing file with data, or any block device, is written only with
//! `--allow-writes`; a mounted (or otherwise held) block device is refused; `--reads-only`
//! never writes. Every refusal happens before the target is opened for writing, or created.
//!
//! Also what the system tells about the target: its size, and from sysfs the disk under it.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;

use flashlane_core::Error;

/// What the user allowed.
#[derive(Debug, Clone, Default)]
pub struct TargetOptions {
    pub path: PathBuf,
    /// Write to an existing file with data, or to a block device.
    pub allow_writes: bool,
    /// Replay the reads only; never open the target for writing.
    pub reads_only: bool,
    /// Leave a file flashlane created in place after the run.
    pub keep: bool,
}

/// What the path names now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Nothing: a new file will be created (its directory exists).
    Missing,
    /// A regular file of this many bytes (0: no data).
    File { size_bytes: u64 },
    /// A block device of this many bytes; `held` says why it may not be used (mounted, a
    /// partition mounted, used by device-mapper / md, swap), if it is.
    BlockDevice {
        size_bytes: u64,
        held: Option<String>,
    },
}

/// How the target will be opened (the outcome of the rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Create a new file (or fill an empty one), written freely: it holds nothing of anyone's.
    Create { existing_empty: bool },
    /// Open for reading only.
    ReadOnly,
    /// Open for reading and writing (an existing file with data or a block device, with
    /// `--allow-writes`).
    ReadWrite,
}

fn refuse(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::Target(format!("{}: {message}", path.display()))
}

/// Look at `path` without opening it for writing.
pub fn inspect(path: &Path) -> Result<Kind, Error> {
    let metadata = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(path).is_ok() {
                return Err(refuse(path, "is a dangling symbolic link"));
            }
            let dir = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            if !dir.is_dir() {
                return Err(refuse(
                    path,
                    format!("directory {} does not exist", dir.display()),
                ));
            }
            return Ok(Kind::Missing);
        }
        Err(e) => return Err(refuse(path, format!("cannot inspect: {e}"))),
    };
    let ft = metadata.file_type();
    if ft.is_file() {
        Ok(Kind::File {
            size_bytes: metadata.len(),
        })
    } else if ft.is_block_device() {
        let (major, minor) = split_dev(metadata.rdev());
        let sysfs = sysfs_dir(major, minor);
        let size_bytes = read_sysfs_u64(&sysfs.join("size")).map_or(0, |sectors| sectors * 512);
        Ok(Kind::BlockDevice {
            size_bytes,
            held: held_by(major, minor, &sysfs),
        })
    } else if ft.is_dir() {
        Err(refuse(path, "is a directory; give a file or block device"))
    } else {
        Err(refuse(
            path,
            "is neither a regular file nor a block device (a character device, FIFO or socket)",
        ))
    }
}

/// The rules. `writes` is how many writes the run would make (the trace's writes, or the
/// probe's); a created file is also written by its fill.
pub fn decide(path: &Path, kind: &Kind, writes: u64, o: &TargetOptions) -> Result<Plan, Error> {
    let writes = if o.reads_only { 0 } else { writes };
    let what = |writes: u64| match writes {
        1 => "1 write".to_string(),
        n => format!("{n} writes"),
    };
    match kind {
        Kind::BlockDevice {
            held: Some(why), ..
        } => Err(refuse(
            path,
            format!("block device {why}: flashlane never uses a device in use (unmount it first)"),
        )),
        _ if o.keep && !matches!(kind, Kind::Missing | Kind::File { size_bytes: 0 }) => {
            Err(refuse(
                path,
                "--keep applies only to a file flashlane creates, and this one exists",
            ))
        }
        Kind::Missing | Kind::File { size_bytes: 0 } if o.reads_only => Err(refuse(
            path,
            if *kind == Kind::Missing {
                "does not exist, and --reads-only needs a target with data to read"
            } else {
                "is empty, and --reads-only needs a target with data to read"
            },
        )),
        Kind::Missing => Ok(Plan::Create {
            existing_empty: false,
        }),
        Kind::File { size_bytes: 0 } => Ok(Plan::Create {
            existing_empty: true,
        }),
        Kind::File { size_bytes } if writes > 0 && !o.allow_writes => Err(refuse(
            path,
            format!(
                "is an existing file with data ({size_bytes} bytes) and the run makes {}: pass \
                 --allow-writes to let flashlane overwrite its contents, or --reads-only",
                what(writes)
            ),
        )),
        Kind::BlockDevice { .. } if writes > 0 && !o.allow_writes => Err(refuse(
            path,
            format!(
                "is a block device and the run makes {}: pass --allow-writes to let flashlane \
                 overwrite its contents (everything on it may be lost), or --reads-only",
                what(writes)
            ),
        )),
        _ if writes > 0 => Ok(Plan::ReadWrite),
        _ => Ok(Plan::ReadOnly),
    }
}

/// An open target; a file flashlane created is removed when this is dropped, unless kept.
pub struct Target {
    pub file: File,
    pub path: PathBuf,
    pub plan: Plan,
    /// Bytes the replay may address (the target's size; a new file's as sized).
    pub size_bytes: u64,
    remove_on_drop: bool,
}

impl Target {
    /// Open (or create, `size_bytes` long) as planned. `created` is told the path of a file
    /// created here, at once (a signal handler can then remove it).
    pub fn open(
        o: &TargetOptions,
        kind: &Kind,
        plan: Plan,
        size_bytes: u64,
        created: &mut dyn FnMut(&Path),
    ) -> Result<Target, Error> {
        let path = &o.path;
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(libc::O_DIRECT);
        let file = match (plan, kind) {
            (Plan::Create { existing_empty }, _) => {
                options.write(true);
                if !existing_empty {
                    options.create_new(true);
                }
                // An existing empty file is opened to be filled, not created (a size-0 file
                // of /proc or /sys lands here too, and refuses direct I/O).
                let doing = if existing_empty {
                    "is empty and cannot be opened to be filled"
                } else {
                    "cannot be created"
                };
                let file = options
                    .open(path)
                    .map_err(|e| refuse(path, format!("{doing}: {e}")))?;
                if !existing_empty && !o.keep {
                    created(path);
                }
                let mut target = Target {
                    file,
                    path: path.clone(),
                    plan,
                    size_bytes,
                    remove_on_drop: !existing_empty && !o.keep,
                };
                if existing_empty {
                    // Still empty? (Another writer between the look and the open.)
                    let len = target.file.metadata().map(|m| m.len()).unwrap_or(1);
                    if len != 0 {
                        target.remove_on_drop = false;
                        return Err(refuse(path, "is no longer empty"));
                    }
                }
                target
                    .file
                    .set_len(size_bytes)
                    .map_err(|e| refuse(path, format!("cannot size to {size_bytes} bytes: {e}")))?;
                return Ok(target);
            }
            (Plan::ReadOnly, _) => options.open(path),
            (Plan::ReadWrite, Kind::BlockDevice { .. }) => {
                // O_EXCL on a block device: the kernel refuses it while mounted or held.
                options
                    .write(true)
                    .custom_flags(libc::O_DIRECT | libc::O_EXCL)
                    .open(path)
            }
            (Plan::ReadWrite, _) => options.write(true).open(path),
        }
        .map_err(|e| refuse(path, format!("cannot open with O_DIRECT: {e}")))?;
        Ok(Target {
            file,
            path: path.clone(),
            plan,
            size_bytes,
            remove_on_drop: false,
        })
    }

    /// Did flashlane create this file for the run?
    pub fn created(&self) -> bool {
        matches!(self.plan, Plan::Create { .. })
    }

    /// Remove a created file now (unless kept); errors are reported, not ignored.
    pub fn finish(mut self) -> Result<(), Error> {
        if self.remove_on_drop {
            self.remove_on_drop = false;
            std::fs::remove_file(&self.path)
                .map_err(|e| refuse(&self.path, format!("cannot remove after the run: {e}")))?;
        }
        Ok(())
    }
}

impl Drop for Target {
    fn drop(&mut self) {
        if self.remove_on_drop {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

fn split_dev(dev: u64) -> (u32, u32) {
    (libc::major(dev), libc::minor(dev))
}

fn sysfs_dir(major: u32, minor: u32) -> PathBuf {
    PathBuf::from(format!("/sys/dev/block/{major}:{minor}"))
}

fn read_sysfs(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

fn read_sysfs_u64(path: &Path) -> Option<u64> {
    read_sysfs(path)?.parse().ok()
}

/// Mount points by device number, from /proc/self/mountinfo.
fn mounts() -> Vec<((u32, u32), String)> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let dev = fields.nth(2)?;
            let mount_point = fields.nth(1)?;
            let (major, minor) = dev.split_once(':')?;
            Some((
                (major.parse().ok()?, minor.parse().ok()?),
                mount_point.to_string(),
            ))
        })
        .collect()
}

/// Why the block device `major:minor` (sysfs directory `sysfs`) is in use, if it is: it or a
/// partition of it is mounted, holds swap, or is held by device-mapper / md.
fn held_by(major: u32, minor: u32, sysfs: &Path) -> Option<String> {
    let mut devices = vec![((major, minor), sysfs.to_path_buf())];
    // A whole disk's partitions are subdirectories with a `partition` file.
    if let Ok(entries) = std::fs::read_dir(sysfs) {
        for entry in entries.flatten() {
            let dir = entry.path();
            if dir.join("partition").exists() {
                if let Some((ma, mi)) = read_sysfs(&dir.join("dev"))
                    .and_then(|d| {
                        d.split_once(':')
                            .map(|(a, b)| (a.to_string(), b.to_string()))
                    })
                    .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
                {
                    devices.push(((ma, mi), dir));
                }
            }
        }
    }
    let mounts = mounts();
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for (dev, dir) in &devices {
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default();
        if let Some((_, at)) = mounts.iter().find(|(d, _)| d == dev) {
            return Some(if *dev == (major, minor) {
                format!("is mounted at {at}")
            } else {
                format!("has partition {name} mounted at {at}")
            });
        }
        if !name.is_empty()
            && swaps
                .lines()
                .skip(1)
                .any(|l| l.split_whitespace().next() == Some(&format!("/dev/{name}")))
        {
            return Some(format!("{name} is in use as swap"));
        }
        if std::fs::read_dir(dir.join("holders")).is_ok_and(|mut h| h.next().is_some()) {
            return Some(format!(
                "{name} is held by another device (device-mapper, md or similar)"
            ));
        }
    }
    None
}

/// What the system tells about a target (the summary's `device`; absent where it says
/// nothing, never made up).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TargetInfo {
    /// `real`: a real drive, not a simulated one.
    pub kind: &'static str,
    pub path: String,
    /// `file` (flashlane created it when `created`) or `block_device`.
    pub target: &'static str,
    pub created: bool,
    /// Bytes of the target the run may address.
    pub size_bytes: u64,
    /// The disk under the target (for a file, the disk holding its filesystem).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_size_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotational: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logical_block_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_block_bytes: Option<u64>,
    /// The kernel's I/O scheduler for the disk (it sits below flashlane's host scheduler).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_scheduler: Option<String>,
    /// The kernel's request queue size for the disk (`nr_requests`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_queue_requests: Option<u64>,
    /// For a file: the filesystem it is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<String>,
    /// Offsets and sizes are multiples of this (direct I/O's alignment).
    pub direct_io_alignment_bytes: u64,
}

/// Direct I/O alignment of `file` (statx's DIO offset alignment where the kernel tells it,
/// else the disk's logical block size, else 4096).
pub fn direct_io_alignment(file: &File, logical_block: Option<u64>) -> u64 {
    use std::os::fd::AsRawFd;
    // SAFETY: statx(2) fills the zeroed struct we own; the path is empty with AT_EMPTY_PATH.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if rc == 0 && stx.stx_mask & libc::STATX_DIOALIGN != 0 && stx.stx_dio_offset_align > 0 {
        return u64::from(stx.stx_dio_offset_align);
    }
    logical_block.unwrap_or(4096)
}

/// What sysfs and mountinfo tell about the target at `path`.
pub fn describe(
    path: &Path,
    kind: &Kind,
    created: bool,
    size_bytes: u64,
    alignment: u64,
) -> TargetInfo {
    // A file not created yet: the disk of its directory.
    let metadata = std::fs::metadata(path).ok().or_else(|| {
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        std::fs::metadata(dir.unwrap_or(Path::new("."))).ok()
    });
    let (dev, is_block) = match (&metadata, kind) {
        (Some(m), Kind::BlockDevice { .. }) => (Some(m.rdev()), true),
        (Some(m), _) => (Some(m.dev()), false),
        (None, _) => (None, false),
    };
    let mut info = TargetInfo {
        kind: "real",
        path: path.display().to_string(),
        target: if is_block { "block_device" } else { "file" },
        created,
        size_bytes,
        disk: None,
        model: None,
        vendor: None,
        disk_size_bytes: None,
        rotational: None,
        logical_block_bytes: None,
        physical_block_bytes: None,
        kernel_scheduler: None,
        kernel_queue_requests: None,
        filesystem: None,
        direct_io_alignment_bytes: alignment,
    };
    let Some(dev) = dev else { return info };
    let (major, minor) = split_dev(dev);
    if !is_block {
        info.filesystem = std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap_or_default()
            .lines()
            .filter(|l| l.split(' ').nth(2) == Some(&format!("{major}:{minor}")))
            .filter_map(|l| l.split(" - ").nth(1)?.split(' ').next().map(str::to_string))
            .next();
    }
    // The disk: the device itself, or the parent of a partition.
    let Ok(mut dir) = sysfs_dir(major, minor).canonicalize() else {
        return info;
    };
    if dir.join("partition").exists() {
        if let Some(parent) = dir.parent() {
            dir = parent.to_path_buf();
        }
    }
    info.disk = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    info.model = read_sysfs(&dir.join("device/model"));
    info.vendor = read_sysfs(&dir.join("device/vendor"));
    info.disk_size_bytes = read_sysfs_u64(&dir.join("size")).map(|s| s * 512);
    info.rotational = read_sysfs_u64(&dir.join("queue/rotational")).map(|r| r == 1);
    info.logical_block_bytes = read_sysfs_u64(&dir.join("queue/logical_block_size"));
    info.physical_block_bytes = read_sysfs_u64(&dir.join("queue/physical_block_size"));
    info.kernel_scheduler = read_sysfs(&dir.join("queue/scheduler")).and_then(|s| {
        // "none [mq-deadline] kyber": the bracketed one is in use.
        let start = s.find('[')?;
        let end = s[start..].find(']')?;
        Some(s[start + 1..start + end].to_string())
    });
    info.kernel_queue_requests = read_sysfs_u64(&dir.join("queue/nr_requests"));
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(allow_writes: bool, reads_only: bool, keep: bool) -> TargetOptions {
        TargetOptions {
            path: PathBuf::from("/t"),
            allow_writes,
            reads_only,
            keep,
        }
    }

    /// Every combination of target, writes and options: the rules of the module comment.
    #[test]
    fn the_rules_refuse_what_they_must_and_only_that() {
        let file = Kind::File { size_bytes: 4096 };
        let empty = Kind::File { size_bytes: 0 };
        let device = Kind::BlockDevice {
            size_bytes: 1 << 30,
            held: None,
        };
        let mounted = Kind::BlockDevice {
            size_bytes: 1 << 30,
            held: Some("is mounted at /".into()),
        };
        let p = Path::new("/t");
        let ok = |k: &Kind, w: u64, o: TargetOptions| decide(p, k, w, &o).ok();
        let create = Some(Plan::Create {
            existing_empty: false,
        });
        // A new file: created whatever the trace does; never for --reads-only.
        assert_eq!(ok(&Kind::Missing, 5, options(false, false, false)), create);
        assert_eq!(ok(&Kind::Missing, 5, options(false, false, true)), create);
        assert_eq!(ok(&Kind::Missing, 0, options(false, true, false)), None);
        assert_eq!(
            ok(&empty, 5, options(false, false, false)),
            Some(Plan::Create {
                existing_empty: true
            })
        );
        // An existing file with data: written only with --allow-writes.
        assert_eq!(ok(&file, 5, options(false, false, false)), None);
        assert_eq!(
            ok(&file, 5, options(true, false, false)),
            Some(Plan::ReadWrite)
        );
        assert_eq!(
            ok(&file, 0, options(false, false, false)),
            Some(Plan::ReadOnly)
        );
        assert_eq!(
            ok(&file, 5, options(false, true, false)),
            Some(Plan::ReadOnly)
        );
        assert_eq!(ok(&file, 5, options(true, false, true)), None, "--keep");
        // A block device: the same, and never when mounted, even to read.
        assert_eq!(ok(&device, 5, options(false, false, false)), None);
        assert_eq!(
            ok(&device, 5, options(true, false, false)),
            Some(Plan::ReadWrite)
        );
        assert_eq!(
            ok(&device, 5, options(false, true, false)),
            Some(Plan::ReadOnly)
        );
        for o in [
            options(true, false, false),
            options(false, true, false),
            options(false, false, false),
        ] {
            let e = decide(p, &mounted, 5, &o).unwrap_err().to_string();
            assert!(e.contains("mounted"), "{e}");
        }
    }
}
