//! The C ABI of phasers (work in progress).
#[no_mangle]
pub extern "C" fn phasers_probe() -> usize {
    phasers_core::available_cores()
}
