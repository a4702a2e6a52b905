// SPDX-License-Identifier: MIT
/*
 * The function tracer's guest half (Linux: kernel/trace/ftrace.c).
 *
 * kpemu's ftrace core and its tracers (the function tracer, the stack
 * tracer) are Go, in the host (kernel/ftrace.go, tracing): the
 * records, the ops and their filters, and the patching of call sites with
 * every CPU stopped, as Linux does under stop_machine. What stays in the
 * guest is the trampoline (entry-ftrace.S) and this gate: while any
 * tracer is registered the host points ftrace_call at
 * arch_ftrace_ops_list_func, which hands (ip, parent_ip, op, regs) to the
 * host with HC_FTRACE_CALL; the host runs the callbacks of every ops
 * whose filter takes ip, as Linux's ftrace_ops_list_func does.
 *
 * This file is built without call sites (kernel/trace/, as in Linux), so
 * the gate is never traced itself, and it is NOKPROBE_SYMBOL as in Linux.
 */
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <asm/ftrace.h>
#include <asm/hostcall.h>

/*
 * The op that ftrace_common passes. Linux points it at the one registered
 * ops when there is one; here the ops live in the host, so it stays NULL.
 */
struct ftrace_ops *function_trace_op;

void arch_ftrace_ops_list_func(unsigned long ip, unsigned long parent_ip,
			       struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	register unsigned long x0 asm("x0") = ip;
	register unsigned long x1 asm("x1") = parent_ip;
	register unsigned long x2 asm("x2") = (unsigned long)op;
	register unsigned long x3 asm("x3") = (unsigned long)fregs;

	asm volatile("hvc #" hostcall_str(HC_FTRACE_CALL)
		     : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3) : "memory");
}
NOKPROBE_SYMBOL(arch_ftrace_ops_list_func);

/*
 * The function graph tracer's return (Linux: kernel/trace/fgraph.c).
 * return_to_handler calls this with the traced function's caller's frame
 * pointer; the host pops the task's return stack (checking that frame
 * pointer, as HAVE_FUNCTION_GRAPH_FP_TEST does), runs the graph tracer's
 * return callback and answers the address the function really returns to.
 */
unsigned long ftrace_return_to_handler(unsigned long frame_pointer)
{
	register unsigned long x0 asm("x0") = frame_pointer;

	asm volatile("hvc #" hostcall_str(HC_FGRAPH_RETURN)
		     : "+r"(x0) : : "memory");
	return x0;
}
NOKPROBE_SYMBOL(ftrace_return_to_handler);
