package kernel

// TaskPid returns task->pid of the task_struct at kernel address task,
// and false when the image's DWARF does not place pid or the task cannot
// be read. The tracers' pid filters (set_event_pid & co) learn a forked
// child's or a freed task's pid from the task_struct their hooks see.
func (k *Kernel) TaskPid(task uint64) (int, bool) {
	if !k.task.ok || task == 0 {
		return 0, false
	}
	v, err := k.Read32(task + uint64(k.task.pidOff))
	if err != nil {
		return 0, false
	}
	return int(int32(v)), true
}

// CurrentPid is Current's pid alone (current->pid on cpu, 0 for the idle
// task), without copying the comm: the pid filters ask it at every hit
// of a filtered tracer. The same rules as CurrentTask apply.
func (k *Kernel) CurrentPid(cpu int) int {
	pid, ok := k.TaskPid(k.CurrentTask(cpu))
	if !ok {
		return 0
	}
	return pid
}
