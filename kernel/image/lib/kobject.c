// SPDX-License-Identifier: MIT
/*
 * Kernel objects, as lib/kobject.c: kobject_init() gives a kobject its
 * type, kobject_add() its name and parent and makes its directory in
 * sysfs with the type's default attribute groups. kobj_sysfs_ops reads a
 * kobj_attribute through its show(). Nothing is ever removed or freed
 * (no kobject_put/kobject_del: see linux/kobject.h).
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/kobject.h>


int kobject_set_name_vargs(struct kobject *kobj, const char *fmt, va_list vargs)
{
	char *s, *p;

	if (kobj->name && !fmt)
		return 0;
	s = kvasprintf(GFP_KERNEL, fmt, vargs);
	if (!s)
		return -ENOMEM;
	/* a name may not hold '/': Linux makes it '!' */
	for (p = s; *p; p++)
		if (*p == '/')
			*p = '!';
	kfree(kobj->name);
	kobj->name = s;
	return 0;
}

int kobject_set_name(struct kobject *kobj, const char *fmt, ...)
{
	va_list vargs;
	int retval;

	va_start(vargs, fmt);
	retval = kobject_set_name_vargs(kobj, fmt, vargs);
	va_end(vargs);
	return retval;
}

void kobject_init(struct kobject *kobj, const struct kobj_type *ktype)
{
	if (!kobj || !ktype) {
		pr_err("kobject: %s is NULL\n", kobj ? "ktype" : "kobject");
		return;
	}
	if (kobj->state_initialized)
		pr_err("kobject (%px): tried to init an initialized object, something is seriously wrong.\n",
		       kobj);
	kobj->ktype = ktype;
	kobj->state_initialized = 1;
}

static int create_dir(struct kobject *kobj)
{
	int error = sysfs_create_dir_ns(kobj, NULL);

	if (error)
		return error;
	if (kobj->ktype)
		error = sysfs_create_groups(kobj, kobj->ktype->default_groups);
	return error;
}

static int kobject_add_internal(struct kobject *kobj)
{
	int error;

	if (!kobj)
		return -ENOENT;
	if (!kobj->name || !kobj->name[0]) {
		pr_err("kobject: (%px): attempted to be registered with empty name!\n", kobj);
		return -EINVAL;
	}
	error = create_dir(kobj);
	if (error) {
		pr_err("%s failed for %s with -%s\n", "kobject_add_internal", kobject_name(kobj),
		       error == -EEXIST ? "EEXIST" : "ENOMEM");
		return error;
	}
	kobj->state_in_sysfs = 1;
	return 0;
}

static int kobject_add_varg(struct kobject *kobj, struct kobject *parent,
			    const char *fmt, va_list vargs)
{
	int retval = kobject_set_name_vargs(kobj, fmt, vargs);

	if (retval) {
		pr_err("can not set name properly!\n");
		return retval;
	}
	kobj->parent = parent;
	return kobject_add_internal(kobj);
}

/*
 * kobject_add(): name @kobj (printf-style) and put it in sysfs under
 * @parent's directory, or /sys without one. Once only per kobject.
 */
int kobject_add(struct kobject *kobj, struct kobject *parent, const char *fmt, ...)
{
	va_list args;
	int retval;

	if (!kobj)
		return -EINVAL;
	if (!kobj->state_initialized) {
		pr_err("kobject '%s' (%px): tried to add an uninitialized object, something is seriously wrong.\n",
		       kobject_name(kobj), kobj);
		return -EINVAL;
	}
	va_start(args, fmt);
	retval = kobject_add_varg(kobj, parent, fmt, args);
	va_end(args);
	return retval;
}

int kobject_init_and_add(struct kobject *kobj, const struct kobj_type *ktype,
			 struct kobject *parent, const char *fmt, ...)
{
	va_list args;
	int retval;

	kobject_init(kobj, ktype);
	va_start(args, fmt);
	retval = kobject_add_varg(kobj, parent, fmt, args);
	va_end(args);
	return retval;
}

/* default kobject attribute operations */
static ssize_t kobj_attr_show(struct kobject *kobj, struct attribute *attr,
			      char *buf)
{
	struct kobj_attribute *kattr = container_of(attr, struct kobj_attribute, attr);
	ssize_t ret = -EIO;

	if (kattr->show)
		ret = kattr->show(kobj, kattr, buf);
	return ret;
}

static ssize_t kobj_attr_store(struct kobject *kobj, struct attribute *attr,
			       const char *buf, size_t count)
{
	struct kobj_attribute *kattr = container_of(attr, struct kobj_attribute, attr);
	ssize_t ret = -EIO;

	if (kattr->store)
		ret = kattr->store(kobj, kattr, buf, count);
	return ret;
}

const struct sysfs_ops kobj_sysfs_ops = {
	.show	= kobj_attr_show,
	.store	= kobj_attr_store,
};

const struct kobj_type dynamic_kobj_ktype = {
	.sysfs_ops	= &kobj_sysfs_ops,
};

/*
 * kobject_create_and_add(): a new kobject named @name in sysfs under
 * @parent, with no attributes of its own (a directory to hold others'),
 * or NULL.
 */
struct kobject *kobject_create_and_add(const char *name, struct kobject *parent)
{
	struct kobject *kobj = kzalloc(sizeof(*kobj), GFP_KERNEL);

	if (!kobj)
		return NULL;
	kobject_init(kobj, &dynamic_kobj_ktype);
	if (kobject_add(kobj, parent, "%s", name)) {
		pr_warn("%s: kobject_add error\n", __func__);
		kfree(kobj);
		return NULL;
	}
	return kobj;
}
