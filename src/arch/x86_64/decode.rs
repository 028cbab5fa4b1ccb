//! Operands of x86-64 instructions for `--check`'s `decode_operand`,
//! numbered as LLVM's `MCInst` numbers them: a memory operand is five
//! (base, scale, index, displacement, segment), a read-write register
//! destination is counted twice (LLVM's tied operands), and branch targets
//! and RIP-relative displacements are relative to the next instruction.

use iced_x86::{Decoder, DecoderOptions, InstructionInfoFactory, OpAccess, OpKind, Register};

use crate::arch::DecodedOperand;

/// Operand `index` of the instruction at the start of `code`, at `pc`.
pub fn decode_operand(code: &[u8], pc: u64, index: u64) -> Result<DecodedOperand, String> {
    let mut decoder = Decoder::with_ip(64, code, pc, DecoderOptions::NONE);
    let instruction = decoder.decode();
    if instruction.is_invalid() {
        return Err(format!("no valid instruction at {:#x}", pc));
    }
    let next = instruction.next_ip();
    let mut factory = InstructionInfoFactory::new();
    let access = factory.info(&instruction).op0_access();
    // None: a register, which has no value an expression can use.
    let mut operands: Vec<(Option<u64>, String)> = Vec::new();
    let register = |r: Register| (None, format!("register {:?}", r));
    for i in 0..instruction.op_count() {
        match instruction.op_kind(i) {
            OpKind::Register => {
                let r = instruction.op_register(i);
                operands.push(register(r));
                if i == 0 && matches!(access, OpAccess::ReadWrite | OpAccess::ReadCondWrite) {
                    operands.push(register(r));
                }
            }
            OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64 => {
                operands.push((Some(instruction.near_branch_target().wrapping_sub(next)), "branch".into()))
            }
            OpKind::Memory => {
                let base = instruction.memory_base();
                let disp = instruction.memory_displacement64();
                let disp = if base == Register::RIP { disp.wrapping_sub(next) } else { disp };
                operands.push(register(base));
                operands.push((Some(instruction.memory_index_scale() as u64), "scale".into()));
                operands.push(register(instruction.memory_index()));
                operands.push((Some(disp), "displacement".into()));
                operands.push(register(instruction.memory_segment()));
            }
            _ => operands.push((instruction.try_immediate(i).ok(), "immediate".into())),
        }
    }
    match operands.get(index as usize) {
        Some((Some(value), _)) => Ok(DecodedOperand { value: *value, next_pc: next }),
        Some((None, what)) => Err(format!("operand {} of the instruction at {:#x} is a {}", index, pc, what)),
        None => Err(format!("the instruction at {:#x} has {} operands, not {}", pc, operands.len(), index + 1)),
    }
}

/// The address of the instruction after the one at the start of `code`.
pub fn next_pc(code: &[u8], pc: u64) -> Result<u64, String> {
    let instruction = Decoder::with_ip(64, code, pc, DecoderOptions::NONE).decode();
    if instruction.is_invalid() {
        return Err(format!("no valid instruction at {:#x}", pc));
    }
    Ok(instruction.next_ip())
}

/// Whether the 6 bytes `before` a return address end a call: `call
/// rel32`, `call *%reg`, `call *disp8(%reg)`, `call *disp32(%reg)` or
/// `call *disp32(%rip)`.
pub fn follows_call(before: &[u8]) -> bool {
    let Ok(b) = <[u8; 6]>::try_from(before) else { return false };
    let is_call_modrm = |modrm: u8, mode: u8| (modrm >> 3) & 7 == 2 && modrm >> 6 == mode && modrm & 7 != 4;
    b[1] == 0xe8
        || (b[4] == 0xff && is_call_modrm(b[5], 3))
        || (b[3] == 0xff && is_call_modrm(b[4], 1))
        || (b[0] == 0xff && (b[1] == 0x15 || is_call_modrm(b[1], 2)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_are_numbered_as_llvm_numbers_them() {
        // callq .+0x105 (e8 00 01 00 00) at 0x1000: branch relative to 0x1005.
        let call = [0xe8, 0x00, 0x01, 0x00, 0x00];
        assert_eq!(decode_operand(&call, 0x1000, 0), Ok(DecodedOperand { value: 0x100, next_pc: 0x1005 }));
        // movq 0x20(%rip), %rax (48 8b 05 20 00 00 00): operand 4 is the
        // displacement; 0 is the destination register.
        let load = [0x48, 0x8b, 0x05, 0x20, 0, 0, 0];
        assert_eq!(decode_operand(&load, 0x2000, 4).map(|o| o.value), Ok(0x20));
        assert!(decode_operand(&load, 0x2000, 0).unwrap_err().contains("register"));
        assert!(decode_operand(&load, 0x2000, 9).unwrap_err().contains("has 6 operands"));
        assert_eq!(next_pc(&load, 0x2000), Ok(0x2007));
        assert!(decode_operand(&[0x0f, 0xff], 0, 0).is_err());
    }

    #[test]
    fn calls_before_return_addresses_are_recognized() {
        assert!(follows_call(&[0x90, 0xe8, 0, 0, 0, 0])); // call rel32
        assert!(follows_call(&[0, 0, 0, 0, 0xff, 0xd0])); // call *%rax
        assert!(follows_call(&[0xff, 0x15, 0, 0, 0, 0])); // call *disp32(%rip)
        assert!(!follows_call(&[0x90, 0xe9, 0, 0, 0, 0])); // jmp rel32
        assert!(!follows_call(&[0, 0, 0, 0, 0xff, 0xe0])); // jmp *%rax
        assert!(!follows_call(&[0xe8]));
    }
}
