package kernel

// CurrentTgid returns current->tgid on cpu (0 for the idle task, or when
// the image's DWARF does not place tgid), for the tracers' record-tgid
// option. The same rules as CurrentTask apply.
func (k *Kernel) CurrentTgid(cpu int) int {
	task := k.CurrentTask(cpu)
	if !k.task.ok || k.task.tgidOff < 0 || task == 0 {
		return 0
	}
	v, err := k.Read32(task + uint64(k.task.tgidOff))
	if err != nil {
		return 0
	}
	return int(int32(v))
}
