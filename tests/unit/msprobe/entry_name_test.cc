// Entry names parsed in one place (msprobe/entry_name.h).
#include "msprobe/entry_name.h"

#include <gtest/gtest.h>

namespace numprobe::detail {
namespace {

TEST(EntryNameTest, EntryOfRow) {
  EXPECT_EQ(EntryOfRow("Functional.conv2d.0.forward.input.0"), "Functional.conv2d.0.forward");
  EXPECT_EQ(EntryOfRow("Functional.conv2d.0.forward.input.3.1"), "Functional.conv2d.0.forward");
  EXPECT_EQ(EntryOfRow("Functional.relu.0.forward.input.inplace"), "Functional.relu.0.forward");
  EXPECT_EQ(EntryOfRow("Module.fc1.Linear.forward.0.parameters.weight"),
            "Module.fc1.Linear.forward.0");
  EXPECT_EQ(EntryOfRow("Module.fc1.Linear.parameters_grad.0.weight"),
            "Module.fc1.Linear.parameters_grad");
  EXPECT_EQ(EntryOfRow("Module.input.Linear.backward.0.output.0"),
            "Module.input.Linear.backward.0");
  EXPECT_EQ(EntryOfRow("Tensor.add_.0.forward.kwargs.alpha"), "Tensor.add_.0.forward");
  EXPECT_EQ(EntryOfRow("loss"), "loss");
}

TEST(EntryNameTest, ApiShape) {
  const EntryNameParts p = ParseEntryName("Torch.linalg.inv.3.backward");
  EXPECT_EQ(p.direction, EntryDirection::kBackward);
  EXPECT_EQ(p.op, "Torch.linalg.inv");
  EXPECT_EQ(p.prefix, "Torch");
  EXPECT_EQ(p.api, "linalg.inv");
  EXPECT_EQ(p.call, "3");
  EXPECT_TRUE(p.is_call());
  const EntryNameParts f = ParseEntryName("Functional.relu.0.forward");
  EXPECT_TRUE(f.forward());
  EXPECT_EQ(f.op, "Functional.relu");
  EXPECT_EQ(f.api, "relu");
}

TEST(EntryNameTest, ModuleShapeHasNoApi) {
  const EntryNameParts p = ParseEntryName("Module.fc1.Linear.forward.0");
  EXPECT_EQ(p.direction, EntryDirection::kForward);
  EXPECT_EQ(p.op, "Module.fc1.Linear");
  EXPECT_EQ(p.call, "0");
  EXPECT_TRUE(p.api.empty());
  EXPECT_TRUE(p.prefix.empty());
}

TEST(EntryNameTest, GradientsAndOtherNames) {
  const EntryNameParts g = ParseEntryName("Module.fc1.Linear.parameters_grad");
  EXPECT_EQ(g.direction, EntryDirection::kParametersGrad);
  EXPECT_EQ(g.op, "Module.fc1.Linear");
  EXPECT_FALSE(g.is_call());
  EXPECT_EQ(ParseEntryName("loss").direction, EntryDirection::kNone);
  EXPECT_TRUE(ParseEntryName("loss").op.empty());
  // Too short to have an op before the direction: msprobe cannot name it either.
  const EntryNameParts s = ParseEntryName("relu.forward");
  EXPECT_EQ(s.direction, EntryDirection::kForward);
  EXPECT_TRUE(s.op.empty());
  // "forward" wins over "backward" in the last two parts, as msprobe reads them.
  EXPECT_TRUE(ParseEntryName("X.y.backward.forward").forward());
}

TEST(EntryNameTest, HasPartMatchesWholeDotSeparatedParts) {
  EXPECT_TRUE(HasPart("Module.fc.parameters_grad", "parameters_grad"));
  EXPECT_TRUE(HasPart("parameters_grad.weight", "parameters_grad"));
  EXPECT_TRUE(HasPart("a.parameters_grad.b", "parameters_grad"));
  EXPECT_TRUE(HasPart("parameters_grad", "parameters_grad"));
  EXPECT_FALSE(HasPart("Module.fc.parameters_gradient", "parameters_grad"));
  EXPECT_FALSE(HasPart("Module.fc.my_parameters_grad", "parameters_grad"));
  EXPECT_FALSE(HasPart("", "parameters_grad"));
  // Empty parts, as SplitDots gives them: before a leading dot, between two, after a trailing one.
  EXPECT_TRUE(HasPart(".x", ""));
  EXPECT_TRUE(HasPart("x..y", ""));
  EXPECT_TRUE(HasPart("x.", ""));
  EXPECT_FALSE(HasPart("x.y", ""));
}

}  // namespace
}  // namespace numprobe::detail
