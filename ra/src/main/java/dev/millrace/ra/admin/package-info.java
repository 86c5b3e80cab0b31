/**
 * The resource adapter's administered objects: {@link dev.millrace.ra.admin.MillraceQueueAdminObject} and
 * {@link dev.millrace.ra.admin.MillraceTopicAdminObject}, the {@code jakarta.jms.Queue} and {@code jakarta.jms.Topic}
 * that a container binds in JNDI from its configuration ({@code <adminobject>} in {@code ra.xml}).
 */
package dev.millrace.ra.admin;
