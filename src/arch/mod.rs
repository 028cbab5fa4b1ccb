//! The architecture seam: the CPUs jitrun links for, each a module of its
//! own (`x86_64/`, `aarch64/`) with its closed set of fixup kinds, their
//! equations and range checks, its stubs, fill bytes, TLS variant and the
//! machine code of jitrun's runtime pieces. Everything above this layer
//! asks through [`Cpu`] and [`EdgeKind`] and never names a CPU's kind,
//! register or opcode. See ARCHITECTURE.md, "Adding a CPU".
//!
//! Names follow the psABIs: `S` symbol address, `A` addend, `P` place,
//! `GOT` address of the global offset table, `G` address of the symbol's GOT
//! entry (we pass the entry's address, not its offset), `L` the symbol's stub
//! (PLT entry), `Z` the symbol's size, `B` the subtracted symbol of a
//! Mach-O `SUBTRACTOR` pair. For TLS kinds the caller passes in `S` the
//! value [`TlsAccess`] names and in `G` the GOT slot it reserved.
//!
//! Pure: nothing here touches this process (the host's own machine code
//! is `support::machine`'s).

pub mod aarch64;
pub mod runtime;
pub mod x86_64;

use std::fmt;

/// A CPU jitrun links code for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cpu {
    X86_64,
    Aarch64,
}

/// How thread-local blocks sit around the thread pointer (Drepper's "ELF
/// Handling For Thread-Local Storage").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsVariant {
    /// The thread pointer addresses a TCB of `tcb_size` bytes, the static
    /// blocks follow it at positive offsets (aarch64: 16 bytes).
    I { tcb_size: u64 },
    /// The static blocks end at the thread pointer, at negative offsets
    /// (x86-64).
    II,
}

/// The CPU this jitrun runs on: the code it runs in this process is for it.
#[cfg(target_arch = "x86_64")]
pub const HOST: Cpu = Cpu::X86_64;
#[cfg(target_arch = "aarch64")]
pub const HOST: Cpu = Cpu::Aarch64;

impl Cpu {
    /// The CPU this jitrun runs on, if it can link for it.
    pub const fn host() -> Option<Cpu> {
        if cfg!(target_arch = "x86_64") {
            Some(Cpu::X86_64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Cpu::Aarch64)
        } else {
            None
        }
    }

    /// The name tools give the CPU.
    pub fn name(self) -> &'static str {
        match self {
            Cpu::X86_64 => "x86-64",
            Cpu::Aarch64 => "aarch64",
        }
    }

    /// The CPU of an ELF `e_machine`.
    pub fn from_elf_machine(e_machine: u16) -> Option<Cpu> {
        match e_machine {
            object::elf::EM_X86_64 => Some(Cpu::X86_64),
            object::elf::EM_AARCH64 => Some(Cpu::Aarch64),
            _ => None,
        }
    }

    /// Its ELF `e_machine`.
    pub fn elf_machine(self) -> u16 {
        match self {
            Cpu::X86_64 => object::elf::EM_X86_64,
            Cpu::Aarch64 => object::elf::EM_AARCH64,
        }
    }

    /// The CPU of a Mach-O `cputype`.
    pub fn from_macho_cputype(cputype: u32) -> Option<Cpu> {
        match cputype {
            object::macho::CPU_TYPE_X86_64 => Some(Cpu::X86_64),
            object::macho::CPU_TYPE_ARM64 => Some(Cpu::Aarch64),
            _ => None,
        }
    }

    /// The kind of an ELF relocation number; `None` for numbers a
    /// relocatable object must not contain or that jitrun does not know.
    #[inline]
    pub fn edge_kind_from_elf(self, r_type: u32) -> Option<EdgeKind> {
        match self {
            Cpu::X86_64 => x86_64::Kind::from_elf(r_type).map(EdgeKind::X86_64),
            Cpu::Aarch64 => aarch64::Kind::from_elf(r_type).map(EdgeKind::Aarch64),
        }
    }

    /// The kind of the ELF relocation numbers of most of a program's
    /// relocations, which [`EdgeKind::plain`] applies in a few
    /// instructions; `None` for every other number (decoded with every
    /// check instead).
    #[inline]
    pub fn plain_edge_kind_from_elf(self, r_type: u32) -> Option<EdgeKind> {
        match self {
            Cpu::X86_64 => x86_64::Kind::plain_from_elf(r_type).map(EdgeKind::X86_64),
            Cpu::Aarch64 => aarch64::Kind::plain_from_elf(r_type).map(EdgeKind::Aarch64),
        }
    }

    /// [`Cpu::plain_edge_kind_from_elf`] as a table to look numbers up in
    /// without a match per CPU: taken once per relocation table, it answers
    /// per entry with a few comparisons (the per-entry dispatch through
    /// [`EdgeKind`] cost a large link ~25 instructions a relocation).
    pub fn plain_elf_kinds(self) -> PlainElfKinds {
        use object::elf::*;
        let numbers: &[u32] = match self {
            Cpu::X86_64 => &[R_X86_64_PC32, R_X86_64_PLT32, R_X86_64_64],
            Cpu::Aarch64 => &[R_AARCH64_ABS64],
        };
        // Unused slots repeat the first: a number then matches there first.
        let number = |slot: usize| numbers.get(slot).copied().unwrap_or(numbers[0]);
        let numbers = [number(0), number(1), number(2)];
        let entry = |n: u32| {
            let kind = self.plain_edge_kind_from_elf(n).expect("a plain kind's number");
            (kind, kind.plain().expect("a plain kind"))
        };
        PlainElfKinds { numbers, kinds: numbers.map(entry) }
    }

    /// The psABI name of an ELF relocation number, also of those jitrun
    /// refuses (for messages).
    pub fn elf_relocation_name(self, r_type: u32) -> String {
        match self {
            Cpu::X86_64 => x86_64::elf_relocation_name(r_type),
            Cpu::Aarch64 => aarch64::elf_relocation_name(r_type),
        }
    }

    /// The `R_*_NONE` kind.
    pub fn no_fixup(self) -> EdgeKind {
        match self {
            Cpu::X86_64 => EdgeKind::X86_64(x86_64::Kind::None),
            Cpu::Aarch64 => EdgeKind::Aarch64(aarch64::Kind::None),
        }
    }

    /// An absolute 64-bit address, `S + A` (`R_*_64`/`ABS64`).
    pub fn absolute64(self) -> EdgeKind {
        match self {
            Cpu::X86_64 => EdgeKind::X86_64(x86_64::Kind::Abs64),
            Cpu::Aarch64 => EdgeKind::Aarch64(aarch64::Kind::Abs64),
        }
    }

    /// An absolute 32-bit address, `S + A` (`R_X86_64_32`, `ABS32`).
    pub fn absolute32(self) -> EdgeKind {
        match self {
            Cpu::X86_64 => EdgeKind::X86_64(x86_64::Kind::Abs32),
            Cpu::Aarch64 => EdgeKind::Aarch64(aarch64::Kind::Abs32),
        }
    }

    /// A 32-bit PC-relative reference, `S + A - P`, such as an `.eh_frame`
    /// pointer is (`R_X86_64_PC32`, `R_AARCH64_PREL32`).
    pub fn pc_relative32(self) -> EdgeKind {
        match self {
            Cpu::X86_64 => EdgeKind::X86_64(x86_64::Kind::Pc32),
            Cpu::Aarch64 => EdgeKind::Aarch64(aarch64::Kind::Prel32),
        }
    }

    /// A 64-bit PC-relative reference, `S + A - P`.
    pub fn pc_relative64(self) -> EdgeKind {
        match self {
            Cpu::X86_64 => EdgeKind::X86_64(x86_64::Kind::Pc64),
            Cpu::Aarch64 => EdgeKind::Aarch64(aarch64::Kind::Prel64),
        }
    }

    /// `S + A - B` in 32 or 64 bits (a Mach-O `SUBTRACTOR` pair).
    pub fn difference(self, width: u64) -> EdgeKind {
        match (self, width) {
            (Cpu::X86_64, 8) => EdgeKind::X86_64(x86_64::Kind::Delta64),
            (Cpu::X86_64, _) => EdgeKind::X86_64(x86_64::Kind::Delta32),
            (Cpu::Aarch64, 8) => EdgeKind::Aarch64(aarch64::Kind::Delta64),
            (Cpu::Aarch64, _) => EdgeKind::Aarch64(aarch64::Kind::Delta32),
        }
    }

    /// Bytes of one stub (PLT entry): a jump through the target's GOT entry.
    pub fn stub_size(self) -> u64 {
        match self {
            Cpu::X86_64 => x86_64::STUB_SIZE,
            Cpu::Aarch64 => aarch64::STUB_SIZE,
        }
    }

    /// Writes a stub at `stub` that jumps through the GOT entry `got_entry`.
    pub fn write_stub(self, out: &mut [u8], stub: u64, got_entry: u64) -> Result<(), FixupError> {
        match self {
            Cpu::X86_64 => x86_64::write_stub(out, stub, got_entry),
            Cpu::Aarch64 => aarch64::write_stub(out, stub, got_entry),
        }
    }

    /// What fills code between functions and the rest of a stub: an
    /// instruction that traps, repeated.
    pub fn code_fill(self) -> &'static [u8] {
        match self {
            Cpu::X86_64 => &x86_64::CODE_FILL,
            Cpu::Aarch64 => &aarch64::CODE_FILL,
        }
    }

    /// What fills code that is run through (between `.init` fragments):
    /// a no-op instruction, repeated.
    pub fn nop(self) -> &'static [u8] {
        match self {
            Cpu::X86_64 => &x86_64::NOP,
            Cpu::Aarch64 => &aarch64::NOP,
        }
    }

    /// Fills `bytes` with `pattern` repeated (its last copy cut short).
    pub fn fill(bytes: &mut [u8], pattern: &[u8]) {
        for (byte, &value) in bytes.iter_mut().zip(pattern.iter().cycle()) {
            *byte = value;
        }
    }

    pub fn tls_variant(self) -> TlsVariant {
        match self {
            Cpu::X86_64 => TlsVariant::II,
            Cpu::Aarch64 => TlsVariant::I { tcb_size: 16 },
        }
    }

    /// Whether its executables keep read-only data in the code's segment,
    /// as GNU ld lays them out by default (x86-64's default is a segment of
    /// its own, `-z separate-code`).
    pub fn read_only_data_with_code(self) -> bool {
        self == Cpu::Aarch64
    }

    /// The largest page size the CPU's Linux kernels use: a layout for
    /// another machine aligns segments to it, as `ld`'s max-page-size.
    pub fn max_page_size(self) -> u64 {
        match self {
            Cpu::X86_64 => 4 << 10,
            Cpu::Aarch64 => 64 << 10,
        }
    }

    /// What a relocation number of a linked file (a shared library's
    /// `DT_RELA` and `DT_JMPREL` tables) is, among those jitrun reads or
    /// writes.
    pub fn dynamic_relocation(self, r_type: u32) -> Option<DynamicRelocation> {
        DynamicRelocation::ALL.into_iter().find(|&kind| self.dynamic_relocation_number(kind) == r_type)
    }

    /// The number of a dynamic relocation on this CPU.
    pub fn dynamic_relocation_number(self, kind: DynamicRelocation) -> u32 {
        use object::elf::*;
        use DynamicRelocation::*;
        match (self, kind) {
            (_, None) => R_X86_64_NONE,
            (Cpu::X86_64, Absolute64) => R_X86_64_64,
            (Cpu::X86_64, GlobalData) => R_X86_64_GLOB_DAT,
            (Cpu::X86_64, JumpSlot) => R_X86_64_JUMP_SLOT,
            (Cpu::X86_64, Copy) => R_X86_64_COPY,
            (Cpu::X86_64, TpOffset64) => R_X86_64_TPOFF64,
            (Cpu::X86_64, DtpModule64) => R_X86_64_DTPMOD64,
            (Cpu::X86_64, DtpOffset64) => R_X86_64_DTPOFF64,
            (Cpu::Aarch64, Absolute64) => R_AARCH64_ABS64,
            (Cpu::Aarch64, GlobalData) => R_AARCH64_GLOB_DAT,
            (Cpu::Aarch64, JumpSlot) => R_AARCH64_JUMP_SLOT,
            (Cpu::Aarch64, Copy) => R_AARCH64_COPY,
            (Cpu::Aarch64, TpOffset64) => R_AARCH64_TLS_TPREL,
            (Cpu::Aarch64, DtpModule64) => R_AARCH64_TLS_DTPMOD,
            (Cpu::Aarch64, DtpOffset64) => R_AARCH64_TLS_DTPREL,
        }
    }

    /// The width of an absolute address an object's relocation number
    /// writes (`R_X86_64_64`, `R_AARCH64_ABS32`, ...): what relocating
    /// debug information needs; `None` for every other number.
    pub fn absolute_data_width(self, r_type: u32) -> Option<usize> {
        use object::elf::*;
        match (self, r_type) {
            (Cpu::X86_64, R_X86_64_64) | (Cpu::Aarch64, R_AARCH64_ABS64) => Some(8),
            (Cpu::X86_64, R_X86_64_32 | R_X86_64_32S) | (Cpu::Aarch64, R_AARCH64_ABS32) => Some(4),
            _ => Option::None,
        }
    }

    /// How many bytes before a return address a call instruction may start.
    pub const fn call_lookback(self) -> usize {
        match self {
            Cpu::X86_64 => 6,
            Cpu::Aarch64 => 4,
        }
    }

    /// Whether `before`, the [`Cpu::call_lookback`] bytes before a return
    /// address, end with a call (for a crash report's scan of the stack).
    pub fn follows_call(self, before: &[u8]) -> bool {
        match self {
            Cpu::X86_64 => x86_64::decode::follows_call(before),
            Cpu::Aarch64 => aarch64::follows_call(before),
        }
    }

    /// The machine code of jitrun's runtime pieces for this CPU.
    pub fn runtime(self) -> &'static runtime::RuntimeCode {
        match self {
            Cpu::X86_64 => &x86_64::runtime::RUNTIME,
            Cpu::Aarch64 => &aarch64::runtime::RUNTIME,
        }
    }

    /// Decodes the instruction at the start of `code` (at address `pc`) for
    /// `--check`: operand `index` as LLVM's `MCInst` numbers them, and the
    /// address of the next instruction.
    pub fn decode_operand(self, code: &[u8], pc: u64, index: u64) -> Result<DecodedOperand, String> {
        match self {
            Cpu::X86_64 => x86_64::decode::decode_operand(code, pc, index),
            Cpu::Aarch64 => aarch64::decode_operand_at(code, pc, index),
        }
    }

    /// The address of the instruction after the one at the start of `code`
    /// (at `pc`).
    pub fn next_pc(self, code: &[u8], pc: u64) -> Result<u64, String> {
        match self {
            Cpu::X86_64 => x86_64::decode::next_pc(code, pc),
            Cpu::Aarch64 if code.len() >= 4 => Ok(pc + 4),
            Cpu::Aarch64 => Err(format!("no instruction at {:#x}: the image ends there", pc)),
        }
    }
}

impl fmt::Display for Cpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The relocations of linked files (shared libraries) jitrun reads (GOT
/// entries of loaded libraries) or writes (its generated TLS module).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DynamicRelocation {
    None,
    /// `S + A` in a word (`R_X86_64_64`, `R_AARCH64_ABS64`).
    Absolute64,
    /// A GOT entry for data (`GLOB_DAT`).
    GlobalData,
    /// A GOT entry of a PLT entry (`JUMP_SLOT`).
    JumpSlot,
    /// A copy of a library's variable (`COPY`).
    Copy,
    TpOffset64,
    DtpModule64,
    DtpOffset64,
}

impl DynamicRelocation {
    const ALL: [DynamicRelocation; 8] = [
        DynamicRelocation::None,
        DynamicRelocation::Absolute64,
        DynamicRelocation::GlobalData,
        DynamicRelocation::JumpSlot,
        DynamicRelocation::Copy,
        DynamicRelocation::TpOffset64,
        DynamicRelocation::DtpModule64,
        DynamicRelocation::DtpOffset64,
    ];
}

/// An operand of an instruction, decoded for `--check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodedOperand {
    pub value: u64,
    /// The address of the instruction after it.
    pub next_pc: u64,
}

/// A fixup kind: one CPU's. The model's edges hold it; each CPU's module
/// documents its kinds' equations and ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    X86_64(x86_64::Kind),
    Aarch64(aarch64::Kind),
}

/// A kind the fixup pass writes without the general machinery (see
/// [`EdgeKind::plain`]): most of a program's relocations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlainFixup {
    /// `S + A - P`, a little-endian i32.
    PcRelative32,
    /// `S + A`, a little-endian u64.
    Absolute64,
}

/// A CPU's plain kinds by their ELF relocation numbers, in up to
/// [`PlainElfKinds::SLOTS`] slots (see [`Cpu::plain_elf_kinds`]).
#[derive(Clone, Copy, Debug)]
pub struct PlainElfKinds {
    numbers: [u32; PlainElfKinds::SLOTS],
    kinds: [(EdgeKind, PlainFixup); PlainElfKinds::SLOTS],
}

impl PlainElfKinds {
    /// Slots in the table: the most plain kinds a CPU has.
    pub const SLOTS: usize = 3;

    /// The slot of the plain kind numbered `r_type`, if it is one.
    #[inline(always)]
    pub fn slot(&self, r_type: u32) -> Option<usize> {
        let [a, b, c] = self.numbers;
        if r_type == a {
            Some(0)
        } else if r_type == b {
            Some(1)
        } else if r_type == c {
            Some(2)
        } else {
            None
        }
    }

    /// The kind in `slot` and how it is written.
    #[inline(always)]
    pub fn kind(&self, slot: usize) -> (EdgeKind, PlainFixup) {
        self.kinds[slot]
    }
}

/// How a reference to a function or variable outside the image reaches it
/// when it is out of the kind's range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FarReference {
    /// Not limited by distance, or no way around it.
    Never,
    /// A call or jump: through the target's stub.
    ThroughStub,
    /// A reference to data or to a function's address: a far variable is
    /// copied into the image (a copy relocation), a far function gets a
    /// stub.
    StubOrCopy,
}

impl EdgeKind {
    pub fn cpu(self) -> Cpu {
        match self {
            EdgeKind::X86_64(_) => Cpu::X86_64,
            EdgeKind::Aarch64(_) => Cpu::Aarch64,
        }
    }

    /// The psABI name, for messages.
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::X86_64(kind) => kind.name(),
            EdgeKind::Aarch64(kind) => kind.name(),
        }
    }

    /// Bytes the fixup writes at its offset.
    #[inline]
    pub fn width(self) -> u64 {
        match self {
            EdgeKind::X86_64(kind) => kind.width(),
            EdgeKind::Aarch64(kind) => kind.width(),
        }
    }

    /// Whether the kind does nothing (`R_*_NONE`).
    #[inline]
    pub fn is_none(self) -> bool {
        matches!(self, EdgeKind::X86_64(x86_64::Kind::None) | EdgeKind::Aarch64(aarch64::Kind::None))
    }

    /// Whether the kind needs a GOT entry holding the target's address.
    pub fn uses_address_got(self) -> bool {
        match self {
            EdgeKind::X86_64(kind) => kind.uses_address_got(),
            EdgeKind::Aarch64(kind) => kind.uses_address_got(),
        }
    }

    /// How a target outside the image out of the kind's reach is reached.
    pub fn far_reference(self) -> FarReference {
        match self {
            EdgeKind::X86_64(kind) => kind.far_reference(),
            EdgeKind::Aarch64(kind) => kind.far_reference(),
        }
    }

    /// The farthest the kind reaches its target from the patched place,
    /// in bytes either way; `None` when distance does not limit it.
    pub fn reach(self) -> Option<u64> {
        match self {
            EdgeKind::X86_64(kind) => kind.reach(),
            EdgeKind::Aarch64(kind) => kind.reach(),
        }
    }

    /// Whether every reference of this kind to one function must see one
    /// address: the halves of an aarch64 `ADRP` + `ADD`/`LDR` pair each
    /// compute it, so a function outside the image that such code takes the
    /// address of gets its stub as its address everywhere (a canonical PLT
    /// entry, as in a native position-dependent executable).
    pub fn needs_canonical_address(self) -> bool {
        match self {
            EdgeKind::X86_64(_) => false,
            EdgeKind::Aarch64(kind) => kind.far_reference() == FarReference::StubOrCopy,
        }
    }

    /// Whether the kind needs `GOT`, the table's base, even with no entry.
    pub fn needs_got_base(self) -> bool {
        match self {
            EdgeKind::X86_64(kind) => kind.needs_got_base(),
            EdgeKind::Aarch64(kind) => kind.needs_got_base(),
        }
    }

    /// Whether the kind stores an absolute address in 32 bits, so that a
    /// target in the image needs the image in the low 2 or 4 GiB.
    pub fn is_abs32(self) -> bool {
        match self {
            EdgeKind::X86_64(kind) => kind.is_abs32(),
            EdgeKind::Aarch64(kind) => kind.is_abs32(),
        }
    }

    /// Whether the kind reaches its target PC-relatively within ±2 GiB or
    /// less, so that a fixed low address (`--define x=0x401000`, a missing
    /// weak symbol at 0) is reached only from an image in the low 2 GiB.
    pub fn is_near_pc_relative(self) -> bool {
        match self {
            EdgeKind::X86_64(kind) => kind.is_near_pc_relative(),
            EdgeKind::Aarch64(kind) => kind.is_near_pc_relative(),
        }
    }

    /// Whether the edge subtracts a second symbol, its `subtrahend` (`B`).
    pub fn uses_subtrahend(self) -> bool {
        match self {
            EdgeKind::X86_64(kind) => kind.uses_subtrahend(),
            EdgeKind::Aarch64(kind) => kind.uses_subtrahend(),
        }
    }

    /// Whether the kind uses the target symbol's size (`Z`).
    pub fn uses_symbol_size(self) -> bool {
        match self {
            EdgeKind::X86_64(kind) => kind.uses_symbol_size(),
            EdgeKind::Aarch64(_) => false,
        }
    }

    /// Whether the kind belongs to a thread-local access (a marker such as
    /// `R_X86_64_TLSDESC_CALL` included).
    pub fn is_tls(self) -> bool {
        match self {
            EdgeKind::X86_64(kind) => kind.is_tls(),
            EdgeKind::Aarch64(kind) => kind.is_tls(),
        }
    }

    /// Which thread-local value the kind needs; `None` for other kinds
    /// and for markers.
    pub fn tls_access(self) -> Option<TlsAccess> {
        match self {
            EdgeKind::X86_64(kind) => kind.tls_access(),
            EdgeKind::Aarch64(kind) => kind.tls_access(),
        }
    }

    /// The kind as a [`PlainFixup`], if it is one.
    #[inline]
    pub fn plain(self) -> Option<PlainFixup> {
        match self {
            EdgeKind::X86_64(kind) => kind.plain(),
            EdgeKind::Aarch64(kind) => kind.plain(),
        }
    }

    /// Applies the fixup to `data` (the block's bytes) at `offset`.
    ///
    /// Pure: it reads and writes only `data`, so unit tests can hit every
    /// kind without mapping memory. A value that does not fit is an error,
    /// never a truncated write.
    pub fn apply(self, data: &mut [u8], offset: usize, values: &FixupValues) -> Result<FixupOutcome, FixupError> {
        match self {
            EdgeKind::X86_64(kind) => x86_64::apply_fixup(kind, data, offset, values),
            EdgeKind::Aarch64(kind) => aarch64::apply_fixup(kind, data, offset, values),
        }
    }
}

impl fmt::Display for EdgeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The values an equation may use. Addresses are absolute.
#[derive(Clone, Copy, Debug, Default)]
pub struct FixupValues {
    /// `P`: address of the patched field.
    pub p: u64,
    /// `S`: target address (or the TLS value of [`TlsAccess`] for TLS kinds).
    pub s: u64,
    /// `A`: addend.
    pub a: i64,
    /// `GOT`: base of the global offset table.
    pub got: u64,
    /// `G`: address of the target's GOT entry, if one was reserved.
    pub g: Option<u64>,
    /// `L`: address of the target's stub, if one was reserved.
    pub stub: Option<u64>,
    /// `Z`: size of the target symbol.
    pub z: u64,
    /// `B`: address of the subtracted symbol (difference kinds).
    pub b: u64,
    /// `S` may be elsewhere when the image runs (a library's symbol in an
    /// image the link cache keeps): a branch goes through its stub and a
    /// GOT load stays one even when `S` is in reach, so that the code
    /// refers only to the image and only its tables change.
    pub movable: bool,
}

/// How a fixup was satisfied, for statistics and maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FixupOutcome {
    Direct,
    ViaStub,
    ViaGot,
    /// A GOT load or call was rewritten to address the target directly.
    Relaxed,
    Nothing,
}

/// The thread-local value a TLS kind needs, which the linker computes for
/// the target variable: into `S` for the first three, into a GOT slot whose
/// address it passes as `G` for the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TlsAccess {
    /// Local-exec: `S` is the variable's offset from the thread pointer.
    TpOffset,
    /// `S` is the variable's offset inside its module's TLS block.
    DtpOffset,
    /// `S` is the module id of the variable's TLS block.
    ModuleId,
    /// Initial-exec: `G` is a slot holding the thread-pointer offset.
    GotTpOffset,
    /// General-dynamic: `G` is a two-word `{module id, offset}` pair.
    GotTlsIndex,
    /// Local-dynamic: `G` is a two-word `{module id, 0}` pair for the image.
    GotTlsModule,
    /// TLS descriptor: `G` is a two-word `{resolver, argument}` pair.
    GotTlsDescriptor,
}

impl TlsAccess {
    /// Whether the access needs the variable's offset from the thread
    /// pointer (static TLS), not only its module and offset.
    pub fn needs_tp_offset(self) -> bool {
        matches!(self, TlsAccess::TpOffset | TlsAccess::GotTpOffset | TlsAccess::GotTlsDescriptor)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FixupError {
    /// The computed value does not fit the field.
    OutOfRange { value: i128, lo: i128, hi: i128 },
    /// The value's low bits are dropped by the field (a scaled offset or a
    /// branch displacement), so they must be zero.
    Misaligned { value: i128, align: u64 },
    /// The field (or the instruction bytes a relaxation reads) is outside the block.
    OutOfBounds,
    /// The kind needs a GOT entry that was not reserved.
    MissingGotEntry,
    /// The relocation patches an instruction of another class than its
    /// kind is for; patching its bits would make a different instruction.
    UnexpectedInstruction { word: u32, expected: &'static str },
}

impl fmt::Display for FixupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FixupError::OutOfRange { value, lo, hi } => {
                write!(f, "out of range: V is {} not in [{}, {})", hex(*value), hex(*lo), hex(*hi))
            }
            FixupError::Misaligned { value, align } => {
                write!(f, "misaligned: V is {} not a multiple of {}", hex(*value), align)
            }
            FixupError::OutOfBounds => f.write_str("the patched field lies outside its section"),
            FixupError::MissingGotEntry => f.write_str("no GOT entry was reserved for it"),
            FixupError::UnexpectedInstruction { word, expected } => {
                write!(f, "unexpected instruction: {:#010x} is not {}", word, expected)
            }
        }
    }
}

pub(crate) fn hex(v: i128) -> String {
    if v < 0 {
        format!("-{:#x}", -v)
    } else {
        format!("{:#x}", v)
    }
}

/// `[lo, hi)`, as the psABIs write their range checks.
pub(crate) type Range = (i128, i128);

pub(crate) const I32: Range = (i32::MIN as i128, i32::MAX as i128 + 1);
pub(crate) const U32: Range = (0, u32::MAX as i128 + 1);

/// `[-2^(bits-1), 2^(bits-1))`: what a signed field of `bits` bits holds.
pub(crate) const fn signed_bits(bits: u32) -> Range {
    (-(1 << (bits - 1)), 1 << (bits - 1))
}

pub(crate) fn in_range(value: i128, (lo, hi): Range) -> Result<(), FixupError> {
    if value >= lo && value < hi {
        Ok(())
    } else {
        Err(FixupError::OutOfRange { value, lo, hi })
    }
}

/// `value` is a multiple of `align` (a power of two).
pub(crate) fn aligned(value: i128, align: u64) -> Result<(), FixupError> {
    if value & (align as i128 - 1) == 0 {
        Ok(())
    } else {
        Err(FixupError::Misaligned { value, align })
    }
}

/// The `N` bytes at `offset`, or `OutOfBounds`.
pub(crate) fn field<const N: usize>(data: &mut [u8], offset: usize) -> Result<&mut [u8; N], FixupError> {
    let end = offset.checked_add(N).ok_or(FixupError::OutOfBounds)?;
    data.get_mut(offset..end).ok_or(FixupError::OutOfBounds)?.try_into().map_err(|_| FixupError::OutOfBounds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_value_and_the_range() {
        let range = FixupError::OutOfRange { value: -0x1_0000_0001, lo: -0x1_0000_0000, hi: 0x1_0000_0000 };
        assert_eq!(range.to_string(), "out of range: V is -0x100000001 not in [-0x100000000, 0x100000000)");
        let misaligned = FixupError::Misaligned { value: 0x1004, align: 8 };
        assert_eq!(misaligned.to_string(), "misaligned: V is 0x1004 not a multiple of 8");
        let instruction = FixupError::UnexpectedInstruction { word: 0xd503201f, expected: "adrp" };
        assert_eq!(instruction.to_string(), "unexpected instruction: 0xd503201f is not adrp");
    }

    #[test]
    fn helpers_check_half_open_ranges_and_alignment() {
        assert_eq!(signed_bits(21), (-0x10_0000, 0x10_0000));
        assert!(in_range(0xf_ffff, signed_bits(21)).is_ok());
        assert!(in_range(0x10_0000, signed_bits(21)).is_err());
        assert!(in_range(-0x10_0000, signed_bits(21)).is_ok());
        assert!(aligned(0x18, 8).is_ok());
        assert_eq!(aligned(0x1c, 8), Err(FixupError::Misaligned { value: 0x1c, align: 8 }));
        let mut data = [0u8; 6];
        assert!(field::<4>(&mut data, 2).is_ok());
        assert_eq!(field::<4>(&mut data, 3).map(drop), Err(FixupError::OutOfBounds));
        assert_eq!(field::<4>(&mut data, usize::MAX).map(drop), Err(FixupError::OutOfBounds));
    }

    /// Every model edge holds a kind: two bytes keep an edge at 24.
    #[test]
    fn a_kind_is_two_bytes() {
        assert_eq!(std::mem::size_of::<EdgeKind>(), 2);
    }

    #[test]
    fn the_plain_table_agrees_with_the_plain_kinds() {
        for cpu in [Cpu::X86_64, Cpu::Aarch64] {
            let table = cpu.plain_elf_kinds();
            for r_type in 0..4096 {
                let kind = cpu.plain_edge_kind_from_elf(r_type);
                let slot = table.slot(r_type);
                assert_eq!(slot.map(|s| table.kind(s).0), kind, "{} {}", cpu, r_type);
                assert_eq!(slot.map(|s| table.kind(s).1), kind.and_then(EdgeKind::plain), "{} {}", cpu, r_type);
            }
        }
    }

    #[test]
    fn every_cpu_names_its_elf_machine_and_back() {
        for cpu in [Cpu::X86_64, Cpu::Aarch64] {
            assert_eq!(Cpu::from_elf_machine(cpu.elf_machine()), Some(cpu));
            assert!(cpu.stub_size() % 8 == 0 && cpu.stub_size() > 0);
            assert_eq!(cpu.no_fixup().cpu(), cpu);
            assert!(cpu.no_fixup().is_none() && !cpu.absolute64().is_none());
            assert_eq!(cpu.absolute64().plain(), Some(PlainFixup::Absolute64));
        }
        assert_eq!(Cpu::from_elf_machine(object::elf::EM_386), None);
        let mut bytes = [0u8; 6];
        Cpu::fill(&mut bytes, Cpu::Aarch64.nop());
        assert_eq!(bytes, [0x1f, 0x20, 0x03, 0xd5, 0x1f, 0x20]);
    }
}
