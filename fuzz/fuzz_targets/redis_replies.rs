#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| poolbench_targets::fuzzing::redis_replies(data));
