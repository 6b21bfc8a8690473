/*
 * mip/instrumented.S - functions instrumented for a Machine IR Profile
 * (seed 002; llvm/docs/MIPBinaryFormat.rst of the MIP patch series), written
 * by hand in the layout the MIP patch's llc emits, since no released
 * compiler emits MIP:
 *
 *   __llvm_mipraw  (alloc, writable)  a 24-byte header, then per function
 *                  its raw profile data, written by the function itself as
 *                  it runs and dumped to a file at exit by mipruntime.c
 *   __llvm_mipmap  (not alloc, SHT_NOTE, retained)  a 24-byte header, then
 *                  per function a record: PC-relative offsets of the raw
 *                  section, of the function's raw data and of the function,
 *                  its size, CFG signature, non-entry block offsets, name
 *
 * Each header is in the comdat group "Header" and each function's raw data
 * and map record in the group "NAME$MIP", as llc does it. The PC-relative
 * fields are `.long SYM-.Lref` where .Lref is the record's first byte: the
 * reader subtracts the first field (the raw section start) from the others.
 *
 * Two builds (testdata/gen.sh, target mip):
 *   default         profile type 0x3 = function coverage | block coverage:
 *                   raw data is u8 IsCovered, u8[blocks] IsCovered
 *   -DMIP_COUNTS    profile type 0xf = also function timestamp and call
 *                   count: u32 CallCount, u32 Timestamp, u8[blocks],
 *                   padded to 32 bits
 * "Covered" is 0; the bytes start as 0xff, the counters as 0xffffffff
 * ("never called"). The instrumentation below writes a function's entry on
 * entry and block K's byte when block K starts, so the raw data says
 * exactly what ran. The timestamp is the order of the
 * function's first call (1, 2, ...), from the clock __mip_clock.
 *
 * classify's negative case is moved out of line, after the other functions,
 * to the fragment classify.cold, as a splitting compiler would: its block
 * offset lies beyond classify's size.
 */

#ifdef MIP_COUNTS
#define PROFILE_TYPE 0xf
#define MODULE_HASH 0xe702c606 /* MD5("mip-counts"), low 32 bits, little endian */
#define BLOCK0 8               /* the first block byte follows CallCount and Timestamp */
#else
#define PROFILE_TYPE 0x3
#define MODULE_HASH 0xd9201219 /* MD5("mip"), low 32 bits, little endian */
#define BLOCK0 1               /* the first block byte follows IsCovered */
#endif

/* The function is running: mark its entry (count its call, stamp its
   first), as compiler-rt's __llvm_mip_call_counts_instrumentation_helper
   does: CallCount and Timestamp start as 0xffffffff (never called); the
   first call sets CallCount to 1 and Timestamp to the clock, later calls
   add 1 to CallCount up to 0xfffffffe. */
.macro mip_entry fn
#ifdef MIP_COUNTS
	cmpl	$0xffffffff, \fn\()$RAW(%rip)
	jne	1f
	movl	$1, \fn\()$RAW(%rip)
	movl	__mip_clock(%rip), %r11d
	addl	$1, %r11d
	movl	%r11d, __mip_clock(%rip)
	movl	%r11d, \fn\()$RAW+4(%rip)
	jmp	2f
1:	cmpl	$0xfffffffe, \fn\()$RAW(%rip)
	je	2f
	incl	\fn\()$RAW(%rip)
2:
#else
	movb	$0, \fn\()$RAW(%rip)
#endif
.endm

/* Non-entry block K (1-based) of fn is running. Leaves the flags alone. */
.macro mip_block fn, k
	movb	$0, \fn\()$RAW+BLOCK0+\k-1(%rip)
.endm

/* The raw data of fn with NBLOCKS non-entry blocks, all "not covered". */
.macro mip_raw fn, nblocks
	.section __llvm_mipraw,"aGw",@progbits,"\fn\()$MIP",comdat
#ifdef MIP_COUNTS
	.p2align 2
\fn\()$RAW:
	.long	0xffffffff		# Call Count: never called
	.long	0xffffffff		# Timestamp
	.if \nblocks
	.zero	\nblocks, 255		# Block Coverage
	.endif
	.p2align 2, 255			# pad to 32 bits
#else
\fn\()$RAW:
	.byte	0xff			# Function Coverage
	.if \nblocks
	.zero	\nblocks, 255		# Block Coverage
	.endif
#endif
.endm

/* Opens the map record of fn; the caller adds the block offsets, then
   mip_map_end. */
.macro mip_map fn, cfg, nblocks
	.section __llvm_mipmap,"GwR",@note,"\fn\()$MIP",comdat
	.p2align 3
\fn\()$MAP:
.Lref_\fn:
	.long	__start___llvm_mipraw-.Lref_\fn	# Raw Section Start PC Offset
	.long	\fn\()$RAW-.Lref_\fn		# Raw Profile Symbol PC Offset
	.long	\fn-.Lref_\fn			# Function PC Offset
	.long	.L\fn\()_end-\fn		# Function Size
	.long	\cfg				# CFG Signature
	.long	\nblocks			# Non-entry Block Count
.endm

.macro mip_map_end fn, namelen
	.long	\namelen			# Function Name Length
	.ascii	"\fn"
	.p2align 3				# pad to 64 bits
.endm

/* ------------------------------------------------------------ headers -- */
	.section __llvm_mipraw,"aGw",@progbits,Header,comdat
	.p2align 3
	.long	0x50494dfb			# Magic
	.short	8				# Version
	.short	0x1				# File Type
	.long	PROFILE_TYPE			# Profile Type
	.long	MODULE_HASH			# Module Hash
	.zero	4
	.long	0x18				# Offset To Data

	.section __llvm_mipmap,"GwR",@note,Header,comdat
	.p2align 3
	.long	0x50494dfb			# Magic
	.short	8				# Version
	.short	0x2				# File Type
	.long	PROFILE_TYPE			# Profile Type
	.long	MODULE_HASH			# Module Hash
	.zero	4
	.long	0x18				# Offset To Data

/* ---------------------------------------------------------- functions -- */
	.text

/* int classify(int x): -1, 0 or 1 by the sign of x.
   Blocks: 1 positive, 2 zero, 3 negative (in classify.cold). */
	.globl	classify
	.type	classify, @function
	.p2align 4
classify:
	.cfi_startproc
	mip_entry classify
	testl	%edi, %edi
	js	.Lclassify_neg
	je	.Lclassify_zero
.Lclassify_pos:
	mip_block classify, 1
	movl	$1, %eax
	ret
.Lclassify_zero:
	mip_block classify, 2
	xorl	%eax, %eax
	ret
.Lclassify_end:
	.cfi_endproc
	.size	classify, .-classify

/* int sum_to(int n): 1 + 2 + ... + n, 0 for n <= 0.
   Blocks: 1 the loop body, 2 the exit. */
	.globl	sum_to
	.type	sum_to, @function
	.p2align 4
sum_to:
	.cfi_startproc
	mip_entry sum_to
	xorl	%eax, %eax
	testl	%edi, %edi
	jle	.Lsum_to_done
.Lsum_to_loop:
	mip_block sum_to, 1
	addl	%edi, %eax
	decl	%edi
	jnz	.Lsum_to_loop
.Lsum_to_done:
	mip_block sum_to, 2
	ret
.Lsum_to_end:
	.cfi_endproc
	.size	sum_to, .-sum_to

/* int count_digits(const char *s): the number of decimal digits in s.
   Blocks: 1 the loop head, 2 a character, 3 a digit, 4 the exit. */
	.globl	count_digits
	.type	count_digits, @function
	.p2align 4
count_digits:
	.cfi_startproc
	mip_entry count_digits
	xorl	%eax, %eax
.Lcount_digits_loop:
	mip_block count_digits, 1
	movzbl	(%rdi), %ecx
	testl	%ecx, %ecx
	je	.Lcount_digits_done
.Lcount_digits_char:
	mip_block count_digits, 2
	incq	%rdi
	subl	$'0', %ecx
	cmpl	$9, %ecx
	ja	.Lcount_digits_loop
.Lcount_digits_digit:
	mip_block count_digits, 3
	incl	%eax
	jmp	.Lcount_digits_loop
.Lcount_digits_done:
	mip_block count_digits, 4
	ret
.Lcount_digits_end:
	.cfi_endproc
	.size	count_digits, .-count_digits

/* int unused(int x): never called by main; its profile stays empty. */
	.globl	unused
	.type	unused, @function
	.p2align 4
unused:
	.cfi_startproc
	mip_entry unused
	leal	1(%rdi), %eax
	ret
.Lunused_end:
	.cfi_endproc
	.size	unused, .-unused

/* classify's negative case, moved out of line. */
	.type	classify.cold, @function
classify.cold:
	.cfi_startproc
.Lclassify_neg:
	mip_block classify, 3
	movl	$-1, %eax
	ret
	.cfi_endproc
	.size	classify.cold, .-classify.cold

/* ------------------------------------------------------ raw and maps -- */
	mip_raw classify, 3
	mip_map classify, 0x5a17c3e1, 3
	.long	.Lclassify_pos-classify		# Block 1 Offset
	.long	.Lclassify_zero-classify	# Block 2 Offset
	.long	.Lclassify_neg-classify		# Block 3 Offset (classify.cold)
	mip_map_end classify, 8

	mip_raw sum_to, 2
	mip_map sum_to, 0x2c9e0b47, 2
	.long	.Lsum_to_loop-sum_to		# Block 1 Offset
	.long	.Lsum_to_done-sum_to		# Block 2 Offset
	mip_map_end sum_to, 6

	mip_raw count_digits, 4
	mip_map count_digits, 0x7d3f5a92, 4
	.long	.Lcount_digits_loop-count_digits	# Block 1 Offset
	.long	.Lcount_digits_char-count_digits	# Block 2 Offset
	.long	.Lcount_digits_digit-count_digits	# Block 3 Offset
	.long	.Lcount_digits_done-count_digits	# Block 4 Offset
	mip_map_end count_digits, 12

	mip_raw unused, 0
	mip_map unused, 0x00000001, 0
	mip_map_end unused, 6

	.section .note.GNU-stack,"",@progbits
