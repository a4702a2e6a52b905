// SPDX-License-Identifier: MIT
/*
 * Interrupt descriptors, after kernel/irq/irqdesc.c: the table (one
 * descriptor per GIC INTID, kpemu's irq numbers) and each line's sysfs
 * directory /sys/kernel/irq/<irq> with Linux 6.1's seven attributes and
 * formats: per_cpu_count, chip_name, hwirq, type, wakeup, name, actions.
 *
 * A line gets its directory when a driver first requests it (Linux: when
 * its descriptor is allocated, at the device tree's mapping); lines
 * requested before irq_sysfs_init() get theirs there. It stays after
 * free_irq(), with no actions, as Linux's does.
 */
#include <linux/kernel.h>
#include <linux/irqdesc.h>
#include <linux/kobject.h>
#include <linux/slab.h>

struct irq_desc irq_desc[NR_IRQS];

struct irq_desc *irq_to_desc(unsigned int irq)
{
	return irq < NR_IRQS ? &irq_desc[irq] : NULL;
}

/* serialises the sysfs adds (Linux: a mutex; kpemu's adds do not sleep) */
static DEFINE_RAW_SPINLOCK(sparse_irq_lock);
static struct kobject *irq_kobj_base;

#define IRQ_ATTR_RO(_name) \
static struct kobj_attribute _name##_attr = __ATTR_RO(_name)

static inline unsigned int irq_desc_kstat_cpu(struct irq_desc *desc, unsigned int cpu)
{
	return READ_ONCE(desc->kstat_irqs[cpu]);
}

/* Every CPU that exists (smp_init() found them; kpemu has no hotplug). */
#define for_each_possible_cpu(cpu) \
	for ((cpu) = 0; (cpu) < READ_ONCE(nr_cpu_ids); (cpu)++)

static ssize_t per_cpu_count_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	struct irq_desc *desc = container_of(kobj, struct irq_desc, kobj);
	ssize_t ret = 0;
	char *p = "";
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		unsigned int c = irq_desc_kstat_cpu(desc, cpu);

		ret += scnprintf(buf + ret, PAGE_SIZE - ret, "%s%u", p, c);
		p = ",";
	}

	ret += scnprintf(buf + ret, PAGE_SIZE - ret, "\n");
	return ret;
}
IRQ_ATTR_RO(per_cpu_count);

static ssize_t chip_name_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	struct irq_desc *desc = container_of(kobj, struct irq_desc, kobj);
	unsigned long flags;
	ssize_t ret = 0;

	raw_spin_lock_irqsave(&desc->lock, flags);
	if (desc->irq_data.chip && desc->irq_data.chip->name) {
		ret = scnprintf(buf, PAGE_SIZE, "%s\n",
				desc->irq_data.chip->name);
	}
	raw_spin_unlock_irqrestore(&desc->lock, flags);

	return ret;
}
IRQ_ATTR_RO(chip_name);

/* Linux prints it for a line in an irq domain; every kpemu line is the GIC's. */
static ssize_t hwirq_show(struct kobject *kobj,
			  struct kobj_attribute *attr, char *buf)
{
	struct irq_desc *desc = container_of(kobj, struct irq_desc, kobj);
	unsigned long flags;
	ssize_t ret = 0;

	raw_spin_lock_irqsave(&desc->lock, flags);
	if (desc->irq_data.chip)
		ret = sprintf(buf, "%lu\n", desc->irq_data.hwirq);
	raw_spin_unlock_irqrestore(&desc->lock, flags);

	return ret;
}
IRQ_ATTR_RO(hwirq);

static ssize_t type_show(struct kobject *kobj,
			 struct kobj_attribute *attr, char *buf)
{
	struct irq_desc *desc = container_of(kobj, struct irq_desc, kobj);
	unsigned long flags;
	ssize_t ret = 0;

	raw_spin_lock_irqsave(&desc->lock, flags);
	ret = sprintf(buf, "%s\n",
		      irqd_is_level_type(&desc->irq_data) ? "level" : "edge");
	raw_spin_unlock_irqrestore(&desc->lock, flags);

	return ret;
}
IRQ_ATTR_RO(type);

static ssize_t wakeup_show(struct kobject *kobj,
			   struct kobj_attribute *attr, char *buf)
{
	struct irq_desc *desc = container_of(kobj, struct irq_desc, kobj);
	unsigned long flags;
	ssize_t ret = 0;

	raw_spin_lock_irqsave(&desc->lock, flags);
	ret = sprintf(buf, "%s\n",
		      irqd_is_wakeup_set(&desc->irq_data) ? "enabled" : "disabled");
	raw_spin_unlock_irqrestore(&desc->lock, flags);

	return ret;
}
IRQ_ATTR_RO(wakeup);

static ssize_t name_show(struct kobject *kobj,
			 struct kobj_attribute *attr, char *buf)
{
	struct irq_desc *desc = container_of(kobj, struct irq_desc, kobj);
	unsigned long flags;
	ssize_t ret = 0;

	raw_spin_lock_irqsave(&desc->lock, flags);
	if (desc->name)
		ret = scnprintf(buf, PAGE_SIZE, "%s\n", desc->name);
	raw_spin_unlock_irqrestore(&desc->lock, flags);

	return ret;
}
IRQ_ATTR_RO(name);

static ssize_t actions_show(struct kobject *kobj,
			    struct kobj_attribute *attr, char *buf)
{
	struct irq_desc *desc = container_of(kobj, struct irq_desc, kobj);
	struct irqaction *action;
	unsigned long flags;
	ssize_t ret = 0;
	char *p = "";

	raw_spin_lock_irqsave(&desc->lock, flags);
	for_each_action_of_desc(desc, action) {
		ret += scnprintf(buf + ret, PAGE_SIZE - ret, "%s%s",
				 p, action->name);
		p = ",";
	}
	raw_spin_unlock_irqrestore(&desc->lock, flags);

	if (ret)
		ret += scnprintf(buf + ret, PAGE_SIZE - ret, "\n");

	return ret;
}
IRQ_ATTR_RO(actions);

static struct attribute *irq_attrs[] = {
	&per_cpu_count_attr.attr,
	&chip_name_attr.attr,
	&hwirq_attr.attr,
	&type_attr.attr,
	&wakeup_attr.attr,
	&name_attr.attr,
	&actions_attr.attr,
	NULL
};
ATTRIBUTE_GROUPS(irq);

static const struct kobj_type irq_kobj_type = {
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups = irq_groups,
};

/* Under sparse_irq_lock. */
static void __irq_sysfs_add(int irq, struct irq_desc *desc)
{
	if (!irq_kobj_base || (desc->istate & IRQS_SYSFS))
		return;
	/* a line without its directory still works: warn and go on */
	if (!desc->kobj.state_initialized)
		kobject_init(&desc->kobj, &irq_kobj_type);
	if (kobject_add(&desc->kobj, irq_kobj_base, "%d", irq))
		pr_warn("Failed to add kobject for irq %d\n", irq);
	else
		desc->istate |= IRQS_SYSFS;
}

/*
 * irq_sysfs_add(): @desc's line has been requested; it gets its
 * directory now if sysfs is up, else at irq_sysfs_init().
 */
void irq_sysfs_add(int irq, struct irq_desc *desc)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&sparse_irq_lock, flags);
	desc->istate |= IRQS_ALLOCATED;
	__irq_sysfs_add(irq, desc);
	raw_spin_unlock_irqrestore(&sparse_irq_lock, flags);
}

/* irq_sysfs_init(): /sys/kernel/irq, and the lines requested so far. */
int irq_sysfs_init(void)
{
	unsigned long flags;
	int irq;

	raw_spin_lock_irqsave(&sparse_irq_lock, flags);
	irq_kobj_base = kobject_create_and_add("irq", kernel_kobj);
	if (!irq_kobj_base) {
		raw_spin_unlock_irqrestore(&sparse_irq_lock, flags);
		return -ENOMEM;
	}
	for (irq = 0; irq < NR_IRQS; irq++)
		if (irq_desc[irq].istate & IRQS_ALLOCATED)
			__irq_sysfs_add(irq, &irq_desc[irq]);
	raw_spin_unlock_irqrestore(&sparse_irq_lock, flags);
	return 0;
}
