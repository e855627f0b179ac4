//! NVTX handed to CUPTI, with the range-start slots wrapped. CUPTI records push/pop and start/end
//! ranges alike (a start and an end marker with one id); ncu keeps them apart (stacks and flat
//! ranges), so this library notes the ids the start/end calls return and the trace marks those ranges
//! `start-end`. With in-process counters on, the push/pop slots are wrapped too, so the launch rule
//! knows each thread's open ranges ([`crate::deep::stack`]). Only slots CUPTI itself filled are
//! wrapped: the others still hold NVTX's initialisers, which would call back into the wrapper.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::deep::ffi::EventAttributes;
use crate::deep::rule::{fnv, fold_digits};
use crate::layout::nvtx::{
    CORE2_DOMAIN_RANGE_POP, CORE2_DOMAIN_RANGE_PUSH_EX, CORE2_DOMAIN_RANGE_START_EX,
    CORE_RANGE_POP, CORE_RANGE_PUSH_A, CORE_RANGE_PUSH_EX, CORE_RANGE_PUSH_W, CORE_RANGE_START_A,
    CORE_RANGE_START_EX, CORE_RANGE_START_W, ETID_CALLBACKS, MESSAGE_ASCII, MESSAGE_REGISTERED,
    MESSAGE_UNICODE, MODULE_CORE, MODULE_CORE2,
};

pub type GetExportTable = unsafe extern "C" fn(u32) -> *const c_void;

/// NVTX's `NvtxExportTableCallbacks`.
#[repr(C)]
struct ExportTableCallbacks {
    struct_size: usize,
    get_module_function_table:
        Option<unsafe extern "C" fn(u32, *mut *mut *mut usize, *mut u32) -> i32>,
}

/// CUPTI's handlers of the wrapped slots, in [`slots`] order (0: not wrapped).
static ORIGINAL: [AtomicUsize; 10] = [const { AtomicUsize::new(0) }; 10];

/// The wrapped slots: module, callback id, wrapper. The push/pop slots (from index 4) only with
/// in-process counters on.
fn slots() -> Vec<(u32, usize, usize)> {
    let mut slots = vec![
        (
            MODULE_CORE,
            CORE_RANGE_START_EX,
            range_start_ex as *const () as usize,
        ),
        (
            MODULE_CORE,
            CORE_RANGE_START_A,
            range_start_a as *const () as usize,
        ),
        (
            MODULE_CORE,
            CORE_RANGE_START_W,
            range_start_w as *const () as usize,
        ),
        (
            MODULE_CORE2,
            CORE2_DOMAIN_RANGE_START_EX,
            domain_range_start_ex as *const () as usize,
        ),
    ];
    if crate::deep::enabled() {
        slots.extend([
            (
                MODULE_CORE,
                CORE_RANGE_PUSH_EX,
                push_ex as *const () as usize,
            ),
            (MODULE_CORE, CORE_RANGE_PUSH_A, push_a as *const () as usize),
            (MODULE_CORE, CORE_RANGE_PUSH_W, push_w as *const () as usize),
            (MODULE_CORE, CORE_RANGE_POP, pop as *const () as usize),
            (
                MODULE_CORE2,
                CORE2_DOMAIN_RANGE_PUSH_EX,
                domain_push_ex as *const () as usize,
            ),
            (
                MODULE_CORE2,
                CORE2_DOMAIN_RANGE_POP,
                domain_pop as *const () as usize,
            ),
        ]);
    }
    slots
}

/// The slot of one callback id, if NVTX has it.
///
/// # Safety
/// `callbacks` is NVTX's callback export table.
unsafe fn slot(
    callbacks: *const ExportTableCallbacks,
    module: u32,
    id: usize,
) -> Option<*mut usize> {
    // SAFETY: per this function's contract.
    let get = unsafe { (*callbacks).get_module_function_table }?;
    let mut table: *mut *mut usize = std::ptr::null_mut();
    let mut size = 0u32;
    // SAFETY: NVTX fills the two out-pointers.
    if unsafe { get(module, &mut table, &mut size) } == 0 || table.is_null() || id >= size as usize
    {
        return None;
    }
    // SAFETY: `id` is below the table's size.
    let slot = unsafe { *table.add(id) };
    (!slot.is_null()).then_some(slot)
}

/// Lets the process's libcupti initialise NVTX, then wraps the start slots it filled.
///
/// # Safety
/// `get_export_table` is NVTX's export-table function.
pub unsafe fn install(get_export_table: GetExportTable) -> i32 {
    let Ok(cupti) = crate::cupti::get() else {
        return 0;
    };
    let Some(init) = cupti.nvtx_init else {
        crate::output::failure(&format!(
            "{} has no InitializeInjectionNvtx2: NVTX ranges cannot be traced",
            cupti.label
        ));
        return 0;
    };
    // SAFETY: NVTX's own function, called as NVTX does.
    let callbacks = unsafe { get_export_table(ETID_CALLBACKS) }.cast::<ExportTableCallbacks>();
    let valid = !callbacks.is_null()
        // SAFETY: non-null export table of NVTX.
        && unsafe { (*callbacks).struct_size } >= std::mem::size_of::<ExportTableCallbacks>();
    let wanted = slots();
    let before: Vec<Option<(*mut usize, usize)>> = wanted
        .iter()
        .map(|&(module, id, _)| {
            // SAFETY: `callbacks` was checked above; slots hold function pointers.
            let s = valid
                .then(|| unsafe { slot(callbacks, module, id) })
                .flatten()?;
            Some((s, unsafe { *s }))
        })
        .collect();
    // SAFETY: CUPTI's NVTX entry point, given NVTX's export-table function.
    let answer = unsafe { init(get_export_table) };
    if answer == 0 {
        return answer;
    }
    for (at, found) in before.iter().enumerate() {
        let Some((s, old)) = *found else { continue };
        // SAFETY: the slot is NVTX's; reading and writing a function pointer there is how injections
        // install handlers.
        unsafe {
            let handler = *s;
            if handler != 0 && handler != old {
                ORIGINAL[at].store(handler, Ordering::Release);
                *s = wanted[at].2;
            }
        }
    }
    answer
}

type StartEx = unsafe extern "C" fn(*const c_void) -> u64;
type StartA = unsafe extern "C" fn(*const i8) -> u64;
type StartW = unsafe extern "C" fn(*const libc::wchar_t) -> u64;
type DomainStartEx = unsafe extern "C" fn(*mut c_void, *const c_void) -> u64;

/// CUPTI's handler for slot `at`.
///
/// # Safety
/// `F` is that slot's signature; the slot was wrapped (so the handler is set).
unsafe fn original<F: Copy>(at: usize) -> F {
    let handler = ORIGINAL[at].load(Ordering::Acquire);
    // SAFETY: per this function's contract: a nonzero function pointer of type F.
    unsafe { std::mem::transmute_copy::<usize, F>(&handler) }
}

unsafe extern "C" fn range_start_ex(attributes: *const c_void) -> u64 {
    // SAFETY: slot 0 is RangeStartEx.
    let id = unsafe { original::<StartEx>(0)(attributes) };
    crate::note_start_end(id);
    id
}

unsafe extern "C" fn range_start_a(message: *const i8) -> u64 {
    // SAFETY: slot 1 is RangeStartA.
    let id = unsafe { original::<StartA>(1)(message) };
    crate::note_start_end(id);
    id
}

unsafe extern "C" fn range_start_w(message: *const libc::wchar_t) -> u64 {
    // SAFETY: slot 2 is RangeStartW.
    let id = unsafe { original::<StartW>(2)(message) };
    crate::note_start_end(id);
    id
}

unsafe extern "C" fn domain_range_start_ex(domain: *mut c_void, attributes: *const c_void) -> u64 {
    // SAFETY: slot 3 is DomainRangeStartEx.
    let id = unsafe { original::<DomainStartEx>(3)(domain, attributes) };
    crate::note_start_end(id);
    id
}

type PushEx = unsafe extern "C" fn(*const EventAttributes) -> i32;
type PushA = unsafe extern "C" fn(*const i8) -> i32;
type PushW = unsafe extern "C" fn(*const libc::wchar_t) -> i32;
type Pop = unsafe extern "C" fn() -> i32;
type DomainPushEx = unsafe extern "C" fn(*mut c_void, *const EventAttributes) -> i32;
type DomainPop = unsafe extern "C" fn(*mut c_void) -> i32;

/// A range's message as a number for the launch rule: its text with runs of digits folded (a
/// repeated block's ranges are one stratum, [`crate::deep::rule::fold_digits`]), or a registered
/// string's handle.
///
/// # Safety
/// `text` is null or a NUL-terminated string.
unsafe fn ascii(text: *const i8) -> u64 {
    if text.is_null() {
        return 0;
    }
    // SAFETY: per this function's contract.
    fnv(fold_digits(
        unsafe { std::ffi::CStr::from_ptr(text) }
            .to_bytes()
            .iter()
            .copied(),
    ))
}

/// # Safety
/// `text` is null or a NUL-terminated wide string.
unsafe fn wide(text: *const libc::wchar_t) -> u64 {
    let mut units: Vec<u32> = Vec::new();
    let mut at = text;
    // SAFETY: per this function's contract, read up to the terminating zero.
    while !at.is_null() && unsafe { *at } != 0 {
        units.push(unsafe { *at } as u32);
        at = unsafe { at.add(1) };
    }
    fnv(fold_digits(units).flat_map(u32::to_le_bytes))
}

/// # Safety
/// `attributes` is null or NVTX event attributes as the caller passed them.
unsafe fn message(attributes: *const EventAttributes) -> u64 {
    // SAFETY: per this function's contract.
    let Some(a) = (unsafe { attributes.as_ref() }) else {
        return 0;
    };
    match a.message_type {
        // SAFETY: the attributes' message is of the type they say.
        MESSAGE_ASCII => unsafe { ascii(a.message.cast()) },
        MESSAGE_UNICODE => unsafe { wide(a.message.cast()) },
        MESSAGE_REGISTERED => fnv((a.message as usize as u64)
            .to_le_bytes()
            .into_iter()
            .chain(*b"registered")),
        _ => 0,
    }
}

unsafe extern "C" fn push_ex(attributes: *const EventAttributes) -> i32 {
    // SAFETY: the caller's attributes; slot 4 is RangePushEx.
    unsafe {
        crate::deep::push(0, message(attributes));
        original::<PushEx>(4)(attributes)
    }
}

unsafe extern "C" fn push_a(text: *const i8) -> i32 {
    // SAFETY: the caller's string; slot 5 is RangePushA.
    unsafe {
        crate::deep::push(0, ascii(text));
        original::<PushA>(5)(text)
    }
}

unsafe extern "C" fn push_w(text: *const libc::wchar_t) -> i32 {
    // SAFETY: the caller's string; slot 6 is RangePushW.
    unsafe {
        crate::deep::push(0, wide(text));
        original::<PushW>(6)(text)
    }
}

unsafe extern "C" fn pop() -> i32 {
    crate::deep::pop(0);
    // SAFETY: slot 7 is RangePop.
    unsafe { original::<Pop>(7)() }
}

unsafe extern "C" fn domain_push_ex(
    domain: *mut c_void,
    attributes: *const EventAttributes,
) -> i32 {
    // SAFETY: the caller's attributes; slot 8 is DomainRangePushEx.
    unsafe {
        crate::deep::push(domain as usize, message(attributes));
        original::<DomainPushEx>(8)(domain, attributes)
    }
}

unsafe extern "C" fn domain_pop(domain: *mut c_void) -> i32 {
    crate::deep::pop(domain as usize);
    // SAFETY: slot 9 is DomainRangePop.
    unsafe { original::<DomainPop>(9)(domain) }
}
