#include "adi3/bootstrap/pmi_wire.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace adi3::pmi {
namespace {

TEST(PmiWire, FormatsCommandLine) {
  auto line = WireCommand("put").add("kvsname", "kvs_1").add("key", "a").add("value", 42).format();
  EXPECT_EQ(line, "cmd=put kvsname=kvs_1 key=a value=42\n");
}

TEST(PmiWire, ParsesCommandLine) {
  auto cmd = WireCommand::parse("cmd=get_result rc=0  msg=success value=(vector,(0,1,2))\n");
  EXPECT_EQ(cmd.name(), "get_result");
  EXPECT_EQ(cmd.get_int("rc"), 0);
  EXPECT_EQ(cmd.get("msg"), "success");
  EXPECT_EQ(cmd.get("value"), "(vector,(0,1,2))");
  EXPECT_FALSE(cmd.get("missing"));
  EXPECT_FALSE(cmd.get_int("msg"));
}

TEST(PmiWire, ParseKeepsEqualsInsideValues) {
  auto cmd = WireCommand::parse("cmd=x a=b=c flag");
  EXPECT_EQ(cmd.get("a"), "b=c");
  EXPECT_EQ(cmd.get("flag"), "");
}

TEST(PmiWire, ParseRejectsNonCommands) {
  EXPECT_THROW(WireCommand::parse("mcmd=spawn"), std::runtime_error);
  EXPECT_THROW(WireCommand::parse(""), std::runtime_error);
  EXPECT_THROW(WireCommand::parse("cmd="), std::runtime_error);
  EXPECT_THROW(WireCommand::parse("cmd=x =v"), std::runtime_error);
}

TEST(PmiWire, AddRejectsUnsafeTokens) {
  WireCommand cmd("put");
  EXPECT_THROW(cmd.add("key", "has space"), std::invalid_argument);
  EXPECT_THROW(cmd.add("key", ""), std::invalid_argument);
  EXPECT_THROW(cmd.add("bad key", "v"), std::invalid_argument);
}

TEST(PmiWire, EncodingRoundTripsEveryByte) {
  std::string all;
  for (int c = 0; c < 256; ++c) {
    all += static_cast<char>(c);
  }
  std::string wire = encode_token(all);
  EXPECT_EQ(wire.find_first_of(" \n=;\\"), std::string::npos);
  EXPECT_EQ(decode_token(wire), all);
}

TEST(PmiWire, EncodingLeavesPlainTextAlone) {
  EXPECT_EQ(encode_token("host-1.example:4242/[a,b](c)@+_"), "host-1.example:4242/[a,b](c)@+_");
  EXPECT_EQ(encode_token("a b"), "a%20b");
  EXPECT_EQ(encode_token("100%"), "100%25");
}

TEST(PmiWire, EmptyStringHasANonEmptyEncoding) {
  EXPECT_EQ(encode_token(""), "%");
  EXPECT_EQ(decode_token("%"), "");
}

TEST(PmiWire, DecodingIsLenientWithForeignText) {
  EXPECT_EQ(decode_token("50%zz"), "50%zz");
  EXPECT_EQ(decode_token("tail%4"), "tail%4");
  EXPECT_EQ(decode_token("(vector,(0,1,4))"), "(vector,(0,1,4))");
}

}  // namespace
}  // namespace adi3::pmi
