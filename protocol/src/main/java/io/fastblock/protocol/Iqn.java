package io.fastblock.protocol;

/** iSCSI qualified names of fastblock targets: one target per volume, named after the volume. */
public final class Iqn {
    public static final String TARGET_PREFIX = "iqn.2026-11.io.fastblock:";

    private Iqn() {
    }

    public static String forVolume(String volumeName) {
        return TARGET_PREFIX + volumeName;
    }

    /** The volume name in a fastblock target IQN, or null if the name is not one of ours. */
    public static String volumeOf(String targetName) {
        if (targetName == null || !targetName.startsWith(TARGET_PREFIX) || targetName.length() == TARGET_PREFIX.length()) {
            return null;
        }
        return targetName.substring(TARGET_PREFIX.length());
    }
}
