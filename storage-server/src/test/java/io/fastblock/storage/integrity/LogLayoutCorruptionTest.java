package io.fastblock.storage.integrity;

import io.fastblock.storage.chain.TailLayout;

/**
 * {@link CorruptionTest} with the tail in the log layout: a flipped bit in the tail's log is
 * repaired from the other members (read under the volume's fence epoch), never from the tail's
 * own chunk file, which the layout does not keep current.
 */
class LogLayoutCorruptionTest extends CorruptionTest {
    @Override
    TailLayout layout() {
        return TailLayout.LOG;
    }
}
