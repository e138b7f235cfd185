package io.fastblock.protocol;

/** Default ports of a one-machine cluster; every server can be told others. */
public final class Ports {
    public static final int ZOOKEEPER = 2181;
    public static final int NAMENODE_HTTP = 9333;
    public static final int STORAGE_FIRST = 9401;
    public static final int ISCSI = 3260;

    private Ports() {
    }
}
