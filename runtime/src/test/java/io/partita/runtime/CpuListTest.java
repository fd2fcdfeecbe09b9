package io.partita.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class CpuListTest {

  @Test
  void shouldParseKernelCpuListsSortedAndDistinct() {
    assertThat(CpuList.parse("0-3,8,10-11")).containsExactly(0, 1, 2, 3, 8, 10, 11);
    assertThat(CpuList.parse(" 2,1,2 \n")).containsExactly(1, 2);
    assertThat(CpuList.parse("")).isEmpty();
  }

  @Test
  void shouldNameTheBadEntry() {
    assertThatThrownBy(() -> CpuList.parse("3-1")).hasMessageContaining("descending");
    assertThatThrownBy(() -> CpuList.parse("a")).hasMessageContaining("bad entry 'a'");
  }
}
