package dev.millrace.jms;

import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

import jakarta.jms.ConnectionMetaData;

/** What a connection reports about the provider. Immutable. */
final class MillraceConnectionMetaData implements ConnectionMetaData {

    static final String PROVIDER_VERSION = "0.1.0";

    @Override
    public String getJMSVersion() {
        return "3.1";
    }

    @Override
    public int getJMSMajorVersion() {
        return 3;
    }

    @Override
    public int getJMSMinorVersion() {
        return 1;
    }

    @Override
    public String getJMSProviderName() {
        return "Millrace";
    }

    @Override
    public String getProviderVersion() {
        return PROVIDER_VERSION;
    }

    @Override
    public int getProviderMajorVersion() {
        return 0;
    }

    @Override
    public int getProviderMinorVersion() {
        return 1;
    }

    /** JMSXGroupID (the record key), JMSXGroupSeq and JMSXDeliveryCount. */
    @Override
    public Enumeration<String> getJMSXPropertyNames() {
        return Collections.enumeration(List.of("JMSXGroupID", "JMSXGroupSeq", "JMSXDeliveryCount"));
    }
}
