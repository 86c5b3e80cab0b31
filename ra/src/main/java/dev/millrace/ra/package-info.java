/**
 * The Millrace resource adapter (Jakarta Connectors 2.1) over the Millrace JMS provider.
 */
package dev.millrace.ra;
