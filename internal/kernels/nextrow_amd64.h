// NEXTROW asks for the R12 bytes at SI + R10 into L2 (PREFETCHT1: every line they touch),
// unless R10 is 0: the strided decoders' row in the next cache block (R10 bytes on), which
// lies anywhere in the pool where the hardware cannot guess it. A prefetch never faults.
// R11 and R13 are scratch; LOOP and DONE are the macro's labels.
#define NEXTROW(LOOP, DONE) \
	TESTQ      R10, R10; \
	JZ         DONE; \
	LEAQ       (SI)(R10*1), R11; \
	LEAQ       -1(R11)(R12*1), R13; \
LOOP: \
	PREFETCHT1 (R11); \
	ADDQ       $64, R11; \
	CMPQ       R11, R13; \
	JBE        LOOP; \
	PREFETCHT1 (R13); \
DONE:
