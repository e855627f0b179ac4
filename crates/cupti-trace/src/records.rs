//! Activity records read from a CUPTI buffer by offset ([`crate::layout`]), without unsafe code: a
//! record is a byte slice, and its string fields come back as the pointers CUPTI stored, for the
//! caller to read while the buffer is alive.

use crate::layout::{api, kernel, marker, FLAG_MARKER_END, FLAG_MARKER_START};
use crate::layout::{KIND_CONCURRENT_KERNEL, KIND_DRIVER, KIND_KERNEL, KIND_MARKER, KIND_RUNTIME};
use crate::trace::{ApiCall, ApiKind, Kernel};

/// One record, its strings still pointers into CUPTI's memory.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A kernel; `name` is filled in by the caller from `name_ptr`.
    Kernel {
        kernel: Kernel,
        name_ptr: usize,
    },
    Api(ApiCall),
    MarkerStart {
        id: u32,
        thread: u32,
        timestamp: u64,
        name_ptr: usize,
        domain_ptr: usize,
    },
    MarkerEnd {
        id: u32,
        timestamp: u64,
    },
    /// A kind this library does not read (or an instantaneous marker).
    Other,
}

fn u16_at(r: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(r.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(r: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(r.get(at..at + 4)?.try_into().ok()?))
}

fn i32_at(r: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_le_bytes(r.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(r: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(r.get(at..at + 8)?.try_into().ok()?))
}

fn xyz(r: &[u8], at: usize) -> Option<[i32; 3]> {
    Some([i32_at(r, at)?, i32_at(r, at + 4)?, i32_at(r, at + 8)?])
}

/// Decodes the record that starts `record`; `None` when the slice is too short for its kind.
pub fn decode(record: &[u8]) -> Option<Record> {
    let kind = u32_at(record, 0)?;
    match kind {
        KIND_KERNEL | KIND_CONCURRENT_KERNEL => Some(Record::Kernel {
            kernel: Kernel {
                correlation: u32_at(record, kernel::CORRELATION_ID)?,
                start: u64_at(record, kernel::START)?,
                end: u64_at(record, kernel::END)?,
                device: u32_at(record, kernel::DEVICE_ID)?,
                context: u32_at(record, kernel::CONTEXT_ID)?,
                stream: u32_at(record, kernel::STREAM_ID)?,
                grid: xyz(record, kernel::GRID_X)?,
                block: xyz(record, kernel::BLOCK_X)?,
                registers: u16_at(record, kernel::REGISTERS_PER_THREAD)?,
                static_shared: i32_at(record, kernel::STATIC_SHARED_MEMORY)?,
                dynamic_shared: i32_at(record, kernel::DYNAMIC_SHARED_MEMORY)?,
                name: 0,
            },
            name_ptr: u64_at(record, kernel::NAME)? as usize,
        }),
        KIND_RUNTIME | KIND_DRIVER => Some(Record::Api(ApiCall {
            correlation: u32_at(record, api::CORRELATION_ID)?,
            thread: u32_at(record, api::THREAD_ID)?,
            start: u64_at(record, api::START)?,
            end: u64_at(record, api::END)?,
            kind: if kind == KIND_RUNTIME {
                ApiKind::Runtime
            } else {
                ApiKind::Driver
            },
            cbid: u32_at(record, api::CBID)?,
        })),
        KIND_MARKER => {
            let flags = u32_at(record, marker::FLAGS)?;
            let id = u32_at(record, marker::ID)?;
            let timestamp = u64_at(record, marker::TIMESTAMP)?;
            if flags & FLAG_MARKER_START != 0 {
                Some(Record::MarkerStart {
                    id,
                    thread: u32_at(record, marker::THREAD_ID)?,
                    timestamp,
                    name_ptr: u64_at(record, marker::NAME)? as usize,
                    domain_ptr: u64_at(record, marker::DOMAIN)? as usize,
                })
            } else if flags & FLAG_MARKER_END != 0 {
                Some(Record::MarkerEnd { id, timestamp })
            } else {
                Some(Record::Other)
            }
        }
        _ => Some(Record::Other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(r: &mut [u8], at: usize, bytes: &[u8]) {
        r[at..at + bytes.len()].copy_from_slice(bytes);
    }

    #[test]
    fn a_kernel_record_decodes_at_its_offsets() {
        let mut r = vec![0u8; 160];
        put(&mut r, 0, &KIND_CONCURRENT_KERNEL.to_le_bytes());
        put(&mut r, kernel::REGISTERS_PER_THREAD, &40u16.to_le_bytes());
        put(&mut r, kernel::START, &1000u64.to_le_bytes());
        put(&mut r, kernel::END, &1500u64.to_le_bytes());
        put(&mut r, kernel::STREAM_ID, &7u32.to_le_bytes());
        for (i, v) in [2i32, 3, 4].iter().enumerate() {
            put(&mut r, kernel::GRID_X + 4 * i, &v.to_le_bytes());
            put(&mut r, kernel::BLOCK_X + 4 * i, &(v * 32).to_le_bytes());
        }
        put(
            &mut r,
            kernel::DYNAMIC_SHARED_MEMORY,
            &4096i32.to_le_bytes(),
        );
        put(&mut r, kernel::CORRELATION_ID, &99u32.to_le_bytes());
        put(&mut r, kernel::NAME, &0xdead_beefu64.to_le_bytes());
        let Some(Record::Kernel { kernel, name_ptr }) = decode(&r) else {
            panic!("not a kernel")
        };
        assert_eq!(name_ptr, 0xdead_beef);
        assert_eq!((kernel.start, kernel.end, kernel.stream), (1000, 1500, 7));
        assert_eq!((kernel.grid, kernel.block), ([2, 3, 4], [64, 96, 128]));
        assert_eq!((kernel.registers, kernel.dynamic_shared), (40, 4096));
        assert_eq!(kernel.correlation, 99);
        assert_eq!(decode(&r[..100]), None, "a short record is refused");
    }

    #[test]
    fn marker_records_start_and_end_by_flag() {
        let mut r = vec![0u8; marker::SIZE];
        put(&mut r, 0, &KIND_MARKER.to_le_bytes());
        put(&mut r, marker::FLAGS, &FLAG_MARKER_START.to_le_bytes());
        put(&mut r, marker::ID, &5u32.to_le_bytes());
        put(&mut r, marker::THREAD_ID, &77u32.to_le_bytes());
        put(&mut r, marker::TIMESTAMP, &10u64.to_le_bytes());
        assert!(matches!(
            decode(&r),
            Some(Record::MarkerStart {
                id: 5,
                thread: 77,
                timestamp: 10,
                ..
            })
        ));
        put(&mut r, marker::FLAGS, &FLAG_MARKER_END.to_le_bytes());
        assert_eq!(
            decode(&r),
            Some(Record::MarkerEnd {
                id: 5,
                timestamp: 10
            })
        );
        put(&mut r, marker::FLAGS, &1u32.to_le_bytes());
        assert_eq!(
            decode(&r),
            Some(Record::Other),
            "instantaneous marks are left out"
        );
    }
}
