# gdb setup for `make qemu-gdb` (QEMU waits on :1234).
# gdb only reads this file if allowed: run `gdb -x .gdbinit`, or add
# `add-auto-load-safe-path /path/to/this/checkout/.gdbinit` to ~/.gdbinit.
set confirm off
set architecture i386:x86-64
file build/kernel.elf
target remote localhost:1234
# The firmware and loader run first; the kernel is only in memory once the loader
# jumps to it, so use hardware breakpoints (software ones would be overwritten).
hbreak kmain
continue
