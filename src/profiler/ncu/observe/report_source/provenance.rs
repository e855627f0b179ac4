//! Provenance from the report files' session details: the GPU model of every device, the driver
//! (ncu records the CUDA version the driver supports, not its release number) and the ncu that made
//! the capture, which wins over a version probed later with `ncu --version`.

use crate::analysis::Reading;
use crate::profiler::ncu::readers::report_file::SessionInfo;

/// The session component that names the driver's CUDA version.
const DRIVER_COMPONENT: &str = "CUDA Version";
/// The session component that names the ncu that wrote the file (`2025.3.1.0 (build …) (…)`).
const NCU_COMPONENT: &str = "Nsight Compute Target";

/// Fills the reading's platform and profiler version from every file's session, in input order.
pub(super) fn apply(sessions: &[SessionInfo], reading: &mut Reading) {
    if let Some(versions) = platform_and_ncu(sessions, reading) {
        reading.profiler.version = Some(versions);
    }
}

/// Adds every session's devices and driver to the reading's platform; the ncu versions the
/// sessions name (`2025.3.1.0`, or several joined by `, `), if any.
pub(super) fn platform_and_ncu(sessions: &[SessionInfo], reading: &mut Reading) -> Option<String> {
    let mut versions: Vec<String> = Vec::new();
    for session in sessions {
        for device in &session.devices {
            if let Some(model) = device.name.as_deref().filter(|m| !m.is_empty()) {
                reading
                    .platform
                    .add_device(device.id.to_string(), model.to_string());
            }
        }
        if let Some(cuda) = session.version(DRIVER_COMPONENT) {
            reading.platform.add_driver(&format!("CUDA {cuda}"));
        }
        // `ncu --version` prints the same first word (`2025.3.1.0`); the build id is left out so
        // that both sources compare equal.
        if let Some(word) = session
            .version(NCU_COMPONENT)
            .and_then(|v| v.split_whitespace().next())
        {
            if !versions.iter().any(|v| v == word) {
                versions.push(word.to_string());
            }
        }
    }
    (!versions.is_empty()).then(|| versions.join(", "))
}
