# One static library per layer (HACKING.md, "Layers"). A layer sees the public headers in
# include/numprobe/, its own folder and the folders of the layers it names in DEPENDS, each as
# "<layer>/<file>.h" (through a per-layer include root under the build tree that holds one link
# to src/<layer>). Nothing else is on its include path, so a layer that reaches around another,
# or a front end that includes src/, does not build.
include(GNUInstallDirs)

# The include root through which src/<layer>/ is seen as "<layer>/...".
function(numprobe_layer_root layer out_var)
  set(root ${CMAKE_BINARY_DIR}/layer_roots/${layer})
  if(NOT EXISTS ${root}/${layer})
    file(MAKE_DIRECTORY ${root})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${layer} ${root}/${layer} SYMBOLIC)
  endif()
  set(${out_var} ${root} PARENT_SCOPE)
endfunction()

# numprobe_add_layer(NAME SOURCES files... [DEPENDS layers...] [PUBLIC_LINK ...] [PRIVATE_LINK ...])
# Builds numprobe_NAME (alias numprobe::NAME).
function(numprobe_add_layer name)
  cmake_parse_arguments(L "" "" "SOURCES;DEPENDS;PUBLIC_LINK;PRIVATE_LINK" ${ARGN})
  set(target numprobe_${name})
  add_library(${target} STATIC ${L_SOURCES})
  add_library(numprobe::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} NUMPROBE_LAYER_DEPENDS "${L_DEPENDS}")
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  numprobe_layer_internal_includes(${target} ${name})
  foreach(dep ${L_DEPENDS})
    target_link_libraries(${target} PUBLIC numprobe_${dep})
  endforeach()
  target_link_libraries(${target}
    PUBLIC ${L_PUBLIC_LINK}
    PRIVATE $<BUILD_INTERFACE:numprobe_warnings> $<BUILD_INTERFACE:numprobe_strict_fp> fmt::fmt
            ${L_PRIVATE_LINK})
  if(RAPIDJSON_INCLUDE_DIR)
    target_include_directories(${target} SYSTEM PRIVATE ${RAPIDJSON_INCLUDE_DIR})
  endif()
  set_property(GLOBAL APPEND PROPERTY NUMPROBE_LAYERS ${target})
endfunction()

# Gives `target` (a layer, or a test or benchmark of one) the internal headers of `layer` and of
# the layers it depends on.
function(numprobe_layer_internal_includes target layer)
  numprobe_layer_root(${layer} root)
  target_include_directories(${target} PRIVATE ${root})
  if(TARGET numprobe_${layer})
    get_target_property(deps numprobe_${layer} NUMPROBE_LAYER_DEPENDS)
    foreach(dep ${deps})
      numprobe_layer_root(${dep} dep_root)
      target_include_directories(${target} PRIVATE ${dep_root})
    endforeach()
  endif()
endfunction()
